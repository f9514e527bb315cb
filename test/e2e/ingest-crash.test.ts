import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { adminCall, freePort, waitHealthy } from '../support/processes';

/**
 * Durability: the built server (node dist/main.js) is SIGKILLed in the middle of a burst of events;
 * after a restart every event that was answered 202 is stored exactly once (and no event twice).
 */
const root = path.join(__dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-crash-'));
const counter = path.join(root, 'dist', 'test-support', 'ingest-count.js');
let child: ChildProcess | null = null;
let httpPort = 0;
let httpsPort = 0;

function start(): ChildProcess {
  const env = {
    ...process.env, NODE_ENV: 'production', TALLY_DATA_DIR: dataDir, TALLY_HOST: '127.0.0.1', TALLY_HTTP_PORT: String(httpPort),
    TALLY_HTTPS_PORT: String(httpsPort), CLICKHOUSE_DATABASE: 'crash', TALLY_LOG_LEVEL: 'warn',
  };
  delete (env as Record<string, string | undefined>).TALLY_ADMIN_SOCKET;
  return spawn(process.execPath, [path.join(root, 'dist', 'main.js')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

const ready = () => waitHealthy(httpPort);
const admin = (command: string, args: Record<string, string>) => adminCall<Record<string, string>>(dataDir, command, args);

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
function send(i: number, domain = 'crash.example'): Promise<boolean> {
  const body = JSON.stringify({ n: 'pageview', u: `https://${domain}/e/${i}`, d: domain });
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: httpPort, path: '/api/event', method: 'POST', agent,
      headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0' } },
    (res) => { res.resume(); res.on('end', () => resolve(res.statusCode === 202)); res.on('error', () => resolve(false)); });
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

beforeAll(async () => {
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(built.stderr);
  await build({ entryPoints: [path.join(root, 'test/support/ingest-count.ts')], outfile: counter, bundle: true, platform: 'node',
    target: 'node20', packages: 'external', logLevel: 'warning' });
  [httpPort, httpsPort] = [await freePort(), await freePort()];
}, 120_000);

afterAll(() => {
  agent.destroy();
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

test('every acknowledged event survives a SIGKILL mid-burst, exactly once', async () => {
  child = start();
  await ready();
  const org = await admin('org create', { name: 'Crash' });
  const site = await admin('site create', { org: org.id, domain: 'crash.example' });

  const { acked, next, unanswered } = await burstThen(0, 'SIGKILL');
  expect(acked.size).toBeGreaterThan(200);
  expect(unanswered).toBeGreaterThan(0); // requests were in flight when the process died

  // Restart on the same data: it comes back and collects again.
  child = start();
  await ready();
  expect(await send(next + 1)).toBe(true);
  child.kill('SIGTERM');
  await new Promise((r) => child!.once('exit', r));

  const r = spawnSync(process.execPath, [counter, dataDir, 'crash', site.id], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  const counts = JSON.parse(r.stdout) as Record<string, number>;
  const missing = [...acked].filter((i) => counts[`/e/${i}`] !== 1);
  const duplicated = Object.entries(counts).filter(([, c]) => c > 1);
  expect(missing).toEqual([]);
  expect(duplicated).toEqual([]);
  expect(counts[`/e/${next + 1}`]).toBe(1);
}, 120_000);

test('SIGTERM mid-burst writes every accepted event before exiting', async () => {
  child = start();
  await ready();
  const org = await admin('org create', { name: 'Term' });
  const site = await admin('site create', { org: org.id, domain: 'term.example' });
  const { acked } = await burstThen(1_000_000, 'SIGTERM', 'term.example');
  expect(acked.size).toBeGreaterThan(200);
  const r = spawnSync(process.execPath, [counter, dataDir, 'crash', site.id], { encoding: 'utf8' });
  const counts = JSON.parse(r.stdout) as Record<string, number>;
  expect([...acked].filter((i) => counts[`/e/${i}`] !== 1)).toEqual([]);
}, 120_000);

/**
 * 32 clients send events with unique paths until enough are acknowledged, then the server gets
 * `signal`; they keep sending until it has exited (SIGKILL) or for 300 ms into the shutdown (SIGTERM).
 * `unanswered`: requests already sent when the signal went that got no 202, the ones the process died
 * with (sends refused after the kill do not count: they prove nothing was in flight).
 */
async function burstThen(from: number, signal: NodeJS.Signals, domain = 'crash.example') {
  const acked = new Set<number>();
  let next = from;
  let stop = false;
  let killed = false;
  let unanswered = 0;
  const worker = async () => {
    while (!stop) {
      const i = next++;
      const beforeKill = !killed;
      if (await send(i, domain)) acked.add(i);
      else if (beforeKill) unanswered++;
    }
  };
  const workers = Array.from({ length: 32 }, worker);
  // Kill once enough events are acknowledged, however loaded the machine is (not after a fixed time).
  const deadline = Date.now() + 60_000;
  while (acked.size < 250 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const exited = new Promise<void>((r) => child!.once('exit', () => r()));
  // Stopping the senders at kill() could leave nothing in flight (all 32 answered just before the
  // signal landed); sending until the exit makes the kill land mid-burst whatever the timing.
  void exited.then(() => {
    if (signal === 'SIGKILL') stop = true;
  });
  killed = true;
  child!.kill(signal);
  if (signal !== 'SIGKILL') setTimeout(() => (stop = true), 300); // keep sending into the shutdown for a moment
  await Promise.all(workers);
  await exited;
  return { acked, next, unanswered };
}
