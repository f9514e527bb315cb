import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { EventEmitter } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { adminCall, freePort, waitHealthy } from '../../test/support/processes';
import { benchRequests } from './payloads';
import { cpuByThread, cpuDelta } from './proc-cpu';

/**
 * POST /api/event under load with durable acknowledgement: the built server (node dist/main.js,
 * embedded chDB, real Redis) in one process, autocannon in this one, same machine. Reports events/s
 * and latency of the 202s, then stops the server and counts the rows: every 202 must be stored.
 *   node scripts/build.mjs && node scripts/bench.mjs bench/ingest/collect-bench.ts [seconds] [connections] [rate]
 * Without a rate every connection sends its next event when the last is answered (closed loop: latency
 * then grows with the connections, by Little's law). With a rate (events/s over all connections, as
 * many independent visitors would send), each connection sends on its own schedule (see `pacing`).
 * The engine's raw insert rate for the same rows is bench/ingest/insert-bench.ts.
 */
const root = process.cwd();
const seconds = Number(process.argv[2] ?? 20);
const connections = Number(process.argv[3] ?? 64);
const rate = process.argv[4] ? Number(process.argv[4]) : undefined;

function startServer(dataDir: string, httpPort: number, httpsPort: number): ChildProcess {
  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server (on its SIGTERM exit) for inspection.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // The server runs with the Node flags `npm start` gives it (a larger young generation: V8's
  // scavenges were a fifth of the main thread), or BENCH_NODE_FLAGS to compare others.
  const flags = (process.env.BENCH_NODE_FLAGS ?? startFlags()).split(' ').filter(Boolean);
  return spawn(process.execPath, [...flags, ...prof, path.join(root, 'dist', 'main.js')], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production', TALLY_LOG_LEVEL: 'warn', TALLY_DATA_DIR: dataDir, TALLY_HOST: '127.0.0.1',
      TALLY_HTTP_PORT: String(httpPort), TALLY_HTTPS_PORT: String(httpsPort), TALLY_TRUST_PROXY: 'loopback', CLICKHOUSE_DATABASE: 'bench' },
  });
}

function startFlags(): string {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(' ').filter((t) => t.startsWith('--')).join(' ');
}

/** The slowest answer in each second of the run: shows whether a tail is steady or a few stalls. */
const worstBySecond: number[] = [];
/**
 * Latencies after the first WARMUP_MS (BENCH_WARMUP_S, default 3): the first seconds open every
 * connection at once and warm the JIT and caches, a burst real visitors (arriving over time) do not
 * make, and at a rate near capacity the queue it leaves takes seconds to drain. Reported beside
 * autocannon's whole-run figures.
 */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_S ?? 3) * 1000;
const steady: number[] = [];

function percentiles(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : 0);
  return { count: s.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s.length ? s[s.length - 1] : 0 };
}

/**
 * How a rate is paced. `paced` (default): every connection sends one event every connections/rate
 * seconds from its own random phase, whatever became of the last (an open loop of independent
 * visitors, wrk2-style), and latency counts from the moment the event was due, so a late answer also
 * charges the sends it delayed (no coordinated omission). `bursts`: autocannon's own `overallRate`,
 * which lets each connection send its share back to back from a once-a-second timer that all
 * connections start together: arrivals come in waves (0 to 2.5x the mean per 10 ms here).
 */
const pacing = process.env.BENCH_PACING === 'bursts' ? 'bursts' : 'paced';

/** The due time of each connection's request in flight (one per connection: no pipelining). */
const dueAt = new WeakMap<object, number>();

function pace(client: autocannon.Client, perConnectionMs: number): void {
  const raw = client as unknown as { _doRequest(): void; destroyed: boolean };
  const send = raw._doRequest.bind(raw);
  let next = performance.now() + Math.random() * perConnectionMs;
  raw._doRequest = () => {
    const due = next;
    next += perConnectionMs;
    const fire = () => {
      if (raw.destroyed) return;
      dueAt.set(client, due);
      send();
    };
    const wait = due - performance.now();
    if (wait <= 0) fire();
    else setTimeout(fire, wait);
  };
}

/** Payloads per connection (each sends its slice round robin). */
const PER_CONNECTION = 8;

async function load(port: number, domain: string) {
  const reqs = benchRequests(domain, 5000).map((r) => ({ method: 'POST' as const, path: '/api/event', ...r }));
  let clients = 0;
  const t0 = Date.now();
  const paced = rate !== undefined && pacing === 'paced';
  const setupClient = (client: autocannon.Client) => {
    // Each connection cycles through its own slice of the payloads, built into bytes once. A
    // `setupRequest` rebuilding every request's bytes cost autocannon a third of its CPU per event
    // (80 against 53 µs here), CPU the server then lacked. All 5,000 payloads are still sent.
    const first = (clients++ * PER_CONNECTION) % reqs.length;
    client.setRequests(Array.from({ length: PER_CONNECTION }, (_, j) => ({ ...reqs[(first + j) % reqs.length] })));
    if (paced) pace(client, (connections * 1000) / rate);
  };
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`, connections, duration: seconds,
    ...(rate && !paced ? { overallRate: rate } : {}),
    setupClient,
    requests: [reqs[0]],
  });
  (instance as unknown as EventEmitter).on('response', (client: object, _status: number, _bytes: number, sent: number) => {
    const due = dueAt.get(client);
    const ms = paced && due !== undefined ? performance.now() - due : sent;
    const elapsed = Date.now() - t0;
    const s = Math.floor(elapsed / 1000);
    worstBySecond[s] = Math.max(worstBySecond[s] ?? 0, Math.round(ms));
    if (elapsed >= WARMUP_MS) steady.push(Math.round(ms));
  });
  return instance;
}

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-collect-bench-'));
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const server = startServer(dataDir, httpPort, httpsPort);
  try {
    await waitHealthy(httpPort);
    const org = await adminCall(dataDir, 'org create', { name: 'bench' });
    const site = await adminCall(dataDir, 'site create', { org: String(org.id), domain: 'bench.example' });
    const cpuBefore = cpuByThread(server.pid!);
    const ownBefore = process.cpuUsage();
    const result = await load(httpPort, 'bench.example');
    const own = process.cpuUsage(ownBefore);
    const serverCpu = cpuDelta(cpuBefore, cpuByThread(server.pid!));
    const stats = await adminCall(dataDir, 'events stats', {});
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
    const counter = path.join(root, 'dist', 'test-support', 'ingest-count.js');
    const counted = spawnSync(process.execPath, [counter, dataDir, 'bench', String(site.id)], { encoding: 'utf8' });
    const stored = Object.values(JSON.parse(counted.stdout || '{}') as Record<string, number>).reduce((a, b) => a + b, 0);
    const accepted = result['2xx'];
    console.log(JSON.stringify({
      seconds, connections, rate: rate ?? null, pacing: rate ? pacing : 'closed loop', accepted, events_per_second: Math.round(accepted / seconds), non_2xx: result.non2xx, errors: result.errors,
      latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
      inserts: stats.batches,
      server_event_loop_delay_ms: stats.event_loop_delay_ms,
      // The server's own share: from the request handler to the 202 (whole run, warm-up included).
      server_ack_ms: stats.ack_ms,
      // Mean wall time per batch of its two steps (session state in Redis, then the engine's insert).
      batch_ms: Object.fromEntries(Object.entries(stats.write_ms as Record<string, number>).map(([k, v]) => [k, Math.round(v / Math.max(1, Number(stats.batches)))])), events_per_insert: Math.round(Number(stats.stored) / Number(stats.batches)),
      latency_after_warmup_ms: percentiles(steady),
      worst_ms_by_second: worstBySecond,
      stored_rows: stored, lost: Math.max(0, accepted - stored),
      // CPU per accepted event (µs), steadier than events/s on a shared machine: the server by thread
      // group, and this process (autocannon).
      cpu_us_per_event: perEvent({ ...serverCpu, load_generator: (own.user + own.system) / 1000 }, accepted),
    }, null, 2));
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function perEvent(ms: Record<string, number>, events: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(ms)) out[k] = Math.round((v * 1000) / Math.max(1, events));
  out.total = Object.values(out).reduce((a, b) => a + b, 0);
  return out;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
