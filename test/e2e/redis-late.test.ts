import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { adminCall, freePort, killChild, startRedis, waitHealthy } from '../support/processes';
import { waitFor } from '../support/wait';

/**
 * Redis starting after Tally (a host's boot order, or Redis restarted while Tally restarts): the
 * built server started without Redis must pick it up when it comes and keep running. It died there
 * (an unheard rejection from a queue connection made during the outage) with exit 1.
 */
const root = path.join(__dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-redis-late-'));
let server: ChildProcess | null = null;
let redis: ChildProcess | null = null;
let httpPort = 0;
let redisPort = 0;

const readyz = () => new Promise<{ redis?: string }>((resolve) => {
  http.get(`http://127.0.0.1:${httpPort}/readyz`, (res) => {
    let text = '';
    res.on('data', (c: Buffer) => (text += c.toString()));
    res.on('end', () => resolve(JSON.parse(text)));
  }).on('error', () => resolve({}));
});

beforeAll(async () => {
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(built.stderr);
  [httpPort, redisPort] = [await freePort(), await freePort()];
  const env = {
    ...process.env, NODE_ENV: 'production', TALLY_DATA_DIR: dataDir, TALLY_HOST: '127.0.0.1', TALLY_HTTP_PORT: String(httpPort),
    TALLY_HTTPS_PORT: String(await freePort()), CLICKHOUSE_DATABASE: 'late', TALLY_LOG_LEVEL: 'warn', REDIS_URL: `redis://127.0.0.1:${redisPort}`,
  };
  delete (env as Record<string, string | undefined>).TALLY_ADMIN_SOCKET;
  server = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], { env, stdio: ['ignore', 'ignore', 'ignore'] });
  await waitHealthy(httpPort);
}, 120_000);

afterAll(async () => {
  for (const child of [server, redis]) if (child) await killChild(child);
  rmSync(dataDir, { recursive: true, force: true });
});

test('started without Redis, the server takes Redis up when it comes and keeps serving', async () => {
  expect(await readyz()).toMatchObject({ status: 'ready', redis: 'down' });
  redis = await startRedis(redisPort);
  await waitFor('redis up on /readyz', async () => (await readyz()).redis === 'up', 20_000);
  // The crash came a moment after Redis was reachable: give the queue connections time to settle.
  await new Promise((r) => setTimeout(r, 4000));
  expect(server!.exitCode).toBeNull();
  expect(await readyz()).toEqual({ status: 'ready', storage: 'up', redis: 'up', rollups: 'current' });
  expect(await adminCall(dataDir, 'org create', { name: 'after redis' })).toMatchObject({ name: 'after redis' });
}, 60_000);
