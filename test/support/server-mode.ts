import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { startClickHouseHttpChild, type ClickHouseHttpChild } from './clickhouse-http-launch';
import { request, type HttpResult } from './http';
import { adminCall, freePort, killChild, waitHealthy } from './processes';
import { waitFor } from './wait';

/**
 * Server mode as it is deployed, for the e2e tests: ClickHouse's HTTP interface over the real engine
 * (test/support/clickhouse-http.ts) in a child process, and Tally processes started from the built
 * dist/main.js with CLICKHOUSE_URL pointing at it, all sharing one database and one Redis prefix of
 * their own (docs/OPERATIONS.md "How server mode is tested").
 */
export interface TallyProc {
  name: string;
  child: ChildProcess;
  dataDir: string;
  httpPort: number;
  httpsPort: number;
  log: string[];
}

export interface ServerMode {
  /** A random tag: the database is `sm_<run>`, the Redis prefix `tally-sm-<run>`. */
  run: string;
  database: string;
  prefix: string;
  tmp: string;
  root: string;
  ch: ClickHouseHttpChild;
  chPort: number;
  /** A client of its own on the facade, for what the test reads or writes around Tally. */
  direct: ClickHouseClient;
  /** Spawns a Tally process (not waited for: see `ready`); `env` adds to or overrides its environment. */
  start(name: string, role: 'api' | 'worker', env?: Record<string, string>): Promise<TallyProc>;
  /** Starts them together and resolves once every one answers /healthz. */
  startAll(specs: { name: string; role: 'api' | 'worker'; env?: Record<string, string> }[]): Promise<TallyProc[]>;
  /** After `ch.kill()` (an outage): the facade again, on the same port and data. */
  restartClickHouse(): Promise<void>;
  close(): Promise<void>;
}

const root = path.join(__dirname, '..', '..');

/** Builds dist (the processes run the bundle) and starts the facade. */
export async function startServerMode(): Promise<ServerMode> {
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(built.stderr);
  const run = randomBytes(4).toString('hex');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tally-server-mode-'));
  const chUser = 'tally';
  const chPassword = `pw-${run}`;
  const secretKey = randomBytes(32).toString('hex');
  const procs: TallyProc[] = [];
  const chDir = path.join(tmp, 'clickhouse');
  const ch = await startClickHouseHttpChild({ dataDir: chDir, user: chUser, password: chPassword });
  const sm: ServerMode = {
    run, database: `sm_${run}`, prefix: `tally-sm-${run}`, tmp, root, ch, chPort: ch.port,
    direct: createClient({ url: ch.url, username: chUser, password: chPassword }),
    async start(name, role, env = {}) {
      const dataDir = path.join(tmp, name);
      const [httpPort, httpsPort] = [await freePort(), await freePort()];
      const full: Record<string, string | undefined> = {
        ...process.env, NODE_ENV: 'production', TALLY_ROLE: role, TALLY_DATA_DIR: dataDir, TALLY_HOST: '127.0.0.1',
        TALLY_HTTP_PORT: String(httpPort), TALLY_HTTPS_PORT: String(httpsPort), TALLY_LOG_LEVEL: process.env.SM_LOG_LEVEL ?? 'warn',
        CLICKHOUSE_URL: `http://127.0.0.1:${sm.chPort}`, CLICKHOUSE_USER: chUser, CLICKHOUSE_PASSWORD: chPassword,
        CLICKHOUSE_DATABASE: sm.database, TALLY_REDIS_PREFIX: sm.prefix, TALLY_SECRET_KEY: secretKey, ...env,
      };
      delete full.TALLY_ADMIN_SOCKET;
      const child = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
      const log: string[] = [];
      for (const s of [child.stdout!, child.stderr!]) s.on('data', (d: Buffer) => log.push(...d.toString().split('\n').filter(Boolean)));
      const p = { name, child, dataDir, httpPort, httpsPort, log };
      procs.push(p);
      return p;
    },
    async startAll(specs) {
      const started = await Promise.all(specs.map((s) => sm.start(s.name, s.role, s.env)));
      await Promise.all(started.map(ready));
      return started;
    },
    async restartClickHouse() {
      sm.ch = await startClickHouseHttpChild({ dataDir: chDir, port: sm.chPort, user: chUser, password: chPassword });
    },
    async close() {
      // SM_LOGS=dir keeps each process's log for a failed run.
      if (process.env.SM_LOGS) for (const p of procs) writeFileSync(path.join(process.env.SM_LOGS, `${p.name}.log`), p.log.join('\n'));
      await Promise.all(procs.map((p) => killChild(p.child)));
      await sm.direct.close();
      await sm.ch.kill();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
  return sm;
}

export async function ready(p: TallyProc): Promise<void> {
  await waitHealthy(p.httpPort, 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${p.log.join('\n')}`);
  });
}

/** A call on /api/v1 over HTTPS (the processes' self-signed pair). */
export const apiCall = (p: TallyProc, method: string, apiPath: string, token: string, body?: unknown): Promise<HttpResult> =>
  request(method, `https://127.0.0.1:${p.httpsPort}/api/v1${apiPath}`, { token, body });

/**
 * The alert's firings listed through `p`, once there is one. A worker evaluates on the minute, and
 * measures alerts made before that minute began; on a loaded machine the run's reports queue behind
 * other statements, hence the two minutes.
 */
export async function firingsOnceFired(p: TallyProc, token: string, siteId: string, alertId: string): Promise<HttpResult> {
  let firings: HttpResult | null = null;
  await waitFor('the alert to fire', async () => {
    firings = await apiCall(p, 'GET', `/sites/${siteId}/alerts/${alertId}/firings`, token);
    return firings.status === 200 && firings.body.data.length > 0;
  }, 120_000);
  return firings!;
}

export const readyz = (p: TallyProc) => request('GET', `http://127.0.0.1:${p.httpPort}/readyz`);

/** One pageview through the collection endpoint, from a visitor of its own unless `ua` is given; the HTTP status. */
export async function collect(p: TallyProc, domain: string, url: string, ua?: string): Promise<number> {
  const r = await request('POST', `http://127.0.0.1:${p.httpPort}/api/event`, {
    raw: JSON.stringify({ n: 'pageview', u: url, d: domain }),
    // Decimal, not hex: a hex tag can spell `feed` (about 1 in 13,000), which isbot takes for a feed
    // reader, and that visitor's pageview then leaves the human figures (a 300-event test saw 299).
    headers: { 'content-type': 'text/plain', 'user-agent': ua ?? `Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0 run-${randomInt(1e9)}` },
  });
  return r.status;
}

export interface SmTenant {
  orgId: string;
  ownerId: string;
  email: string;
  siteId: string;
  domain: string;
  token: string;
}

/** An organisation with an owner, a site and a key, made through `p`'s admin socket. */
export async function makeTenant(p: TallyProc, name: string, opts: { retentionDays?: number; scopes?: string } = {}): Promise<SmTenant> {
  const tag = randomBytes(3).toString('hex');
  const org = await adminCall<{ id: string }>(p.dataDir, 'org create', {
    name, ...(opts.retentionDays ? { 'retention-days': String(opts.retentionDays) } : {}),
  });
  const email = `owner-${tag}@example.com`;
  const ownerId = (await adminCall<{ id: string }>(p.dataDir, 'user create', { org: org.id, email, role: 'owner' })).id;
  const domain = `sm-${tag}.example.com`;
  const siteId = (await adminCall<{ id: string }>(p.dataDir, 'site create', { org: org.id, domain })).id;
  const token = (await adminCall<{ token: string }>(p.dataDir, 'key create', {
    org: org.id, user: ownerId,
    scopes: opts.scopes ?? 'analytics:read,settings:read,settings:write,alerts:read,alerts:write',
  })).token;
  return { orgId: org.id, ownerId, email, siteId, domain, token };
}

/** `tally <args>` run against `p` (its admin socket), asynchronously: several can run at once. */
export function cli(sm: ServerMode, p: TallyProc, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(sm.root, 'bin', 'tally.js'), ...args], {
      env: { ...process.env, TALLY_DATA_DIR: p.dataDir, TALLY_ADMIN_SOCKET: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}
