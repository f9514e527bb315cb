import type { ChildProcess } from 'node:child_process';
import { z } from 'zod';
import { API_ROUTES } from '../../api/modules';
import type { RouteRegistrar } from '../../api/route';
import { JOBS } from '../../workers/registry';
import type { JobDefinition } from '../../workers/types';
import { startTestService, type TestService } from '../support/harness';
import { request } from '../support/http';
import { freePort, startRedis, stopRedis } from '../support/processes';
import { waitFor } from '../support/wait';

/**
 * Redis is optional at run time. A test-only route and job exercise the mechanism every queue-backed
 * endpoint uses (ctx.queues.enqueue); the integration re-sync's own refusal is in integrations.test.ts.
 */
const received: unknown[] = [];
const echoJob: JobDefinition<{ n: number }> = {
  queue: 'test-echo',
  defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
  async handler(payload) {
    received.push(payload);
  },
};
JOBS.push(echoJob);
API_ROUTES.push((r: RouteRegistrar) =>
  r.route({
    method: 'post', path: '/test-only/enqueue', summary: 'test only', scope: 'analytics:read',
    body: z.strictObject({ n: z.number().int() }),
    async handler({ app, body }) {
      await app.queues.enqueue('test-echo', body);
      return { data: { state: 'queued' }, status: 202 };
    },
  }),
);


describe('with Redis unreachable (REDIS_URL=redis://127.0.0.1:1)', () => {
  let svc: TestService;
  let token: string;
  beforeAll(async () => {
    svc = await startTestService({ REDIS_URL: 'redis://127.0.0.1:1', TALLY_RATE_LIMIT_PER_MINUTE: '3' });
    token = (await svc.tenant()).token;
  });
  afterAll(() => svc.stop());

  test('the service starts, serves reads, and /readyz says Redis is down', async () => {
    const ready = await request('GET', `${svc.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', storage: 'up', redis: 'down', rollups: 'current' });
    expect((await svc.api('GET', '/sites', { token })).status).toBe(200);
  });

  test('a queue-backed endpoint answers 503 queue_unavailable with Retry-After', async () => {
    const res = await svc.api('POST', '/test-only/enqueue', { token, body: { n: 1 } });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('queue_unavailable');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  test('rate limiting falls back to memory: the 4th request of a 3-a-minute key is 429', async () => {
    const k = await svc.tenant();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await svc.api('GET', '/sites', { token: k.token })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});


describe('when Redis goes away and comes back', () => {
  let svc: TestService;
  let token: string;
  let port: number;
  let redis: ChildProcess;
  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    svc = await startTestService({ REDIS_URL: `redis://127.0.0.1:${port}` });
    token = (await svc.tenant()).token;
  });
  afterAll(async () => {
    await svc.stop();
    if (redis.exitCode === null) await stopRedis(redis);
  });

  const readyz = async () => (await request('GET', `${svc.base}/readyz`)).body.redis;
  const enqueue = (n: number) => svc.api('POST', '/test-only/enqueue', { token, body: { n } });

  test('jobs are queued and run by the workers inside the same process', async () => {
    await waitFor('redis up', async () => (await readyz()) === 'up');
    const res = await enqueue(1);
    expect(res.status).toBe(202);
    await waitFor('the job ran', () => received.some((p) => (p as { n: number }).n === 1));
  });

  test('Redis down: readiness says so, queue-backed endpoints 503, reads still served', async () => {
    await stopRedis(redis);
    await waitFor('redis down', async () => (await readyz()) === 'down');
    expect((await enqueue(2)).status).toBe(503);
    expect((await svc.api('GET', '/sites', { token })).status).toBe(200);
  });

  test('Redis back: the queue works again without a restart', async () => {
    redis = await startRedis(port);
    await waitFor('redis up again', async () => (await readyz()) === 'up');
    await waitFor('enqueue accepted', async () => (await enqueue(3)).status === 202);
    await waitFor('the job ran', () => received.some((p) => (p as { n: number }).n === 3));
  });
});
