import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startService, type Running } from '../../api/runtime';
import { loadConfig, type Role } from '../../core/config';
import { JOBS } from '../../workers/registry';
import type { JobDefinition } from '../../workers/types';
import { request } from '../support/http';
import { processDataDir } from '../support/engine';

/**
 * TALLY_ROLE splits the service. In production the split needs a ClickHouse server; the role logic
 * itself does not care which engine is below, so here both roles run over chDB in one process (the
 * config check that forbids this is bypassed on purpose, and tested in test/unit/config.test.ts).
 */
const ran: string[] = [];
const job: JobDefinition<{ from: string }> = {
  queue: 'test-roles',
  defaultJobOptions: { removeOnComplete: true },
  async handler(p) {
    ran.push(p.from);
  },
};
JOBS.push(job);

const prefix = `tally-test-roles-${randomBytes(4).toString('hex')}`;
const dataDir = processDataDir;

async function start(role: Role, db: string): Promise<Running> {
  const config = loadConfig({
    TALLY_DATA_DIR: dataDir, TALLY_HTTPS_PORT: '0', TALLY_HTTP_PORT: '0', TALLY_HOST: '127.0.0.1',
    TALLY_ADMIN_SOCKET: path.join(dataDir, `admin-${db}.sock`), CLICKHOUSE_DATABASE: db,
  });
  const running = await startService({ ...config, role }, { redisPrefix: prefix });
  await running.rollupsCaughtUp;
  return running;
}

const until = async (ok: () => boolean, ms = 10_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (ok()) return true;
  return false;
};

let api: Running;
let worker: Running;
const db = `roles_${randomBytes(4).toString('hex')}`;
beforeAll(async () => {
  api = await start('api', db);
  await until(() => api.ctx.redis.isUp());
});
afterAll(async () => {
  await api.stop();
  await worker?.stop();
});

test('the api role runs no workers: a queued job waits until a worker role starts, which runs it', async () => {
  await api.ctx.queues.enqueue('test-roles', { from: 'api' });
  expect(await until(() => ran.length > 0, 1500)).toBe(false);
  worker = await start('worker', db);
  expect(await until(() => ran.includes('api'))).toBe(true);
});

test('the worker role opens no HTTPS port and serves only the probes on the plain port', async () => {
  expect(worker.httpsPort).toBe(0);
  const base = `http://127.0.0.1:${worker.httpPort}`;
  expect((await request('GET', `${base}/healthz`)).body).toEqual({ status: 'ok' });
  expect((await request('GET', `${base}/readyz`)).body).toEqual({ status: 'ready', storage: 'up', redis: 'up', rollups: 'current' });
  const api404 = await request('GET', `${base}/api/v1/sites`);
  expect(api404.status).toBe(404);
  expect(api404.body.error.code).toBe('not_found');
});
