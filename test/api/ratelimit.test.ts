import { KeyRateLimiter } from '../../api/rate-limit';
import { AppError } from '../../core/errors';
import type { RedisHandle } from '../../infra/redis';
import { startTestService, type TestService } from '../support/harness';
import { testRedis } from '../support/redis';

/** Per-key request budget in Redis: 429 rate_limited with Retry-After once it is spent. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ TALLY_RATE_LIMIT_PER_MINUTE: '5' });
});
afterAll(() => svc.stop());

test('the sixth request in a minute is 429 rate_limited with Retry-After; another key is unaffected', async () => {
  const t = await svc.tenant();
  const results = [];
  for (let i = 0; i < 6; i++) results.push(await svc.api('GET', '/sites', { token: t.token }));
  expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
  expect(results.slice(0, 5).map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
  const refused = results[5];
  expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/retry in \d+ s/) } });
  const retry = Number(refused.headers['retry-after']);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);

  const other = await t.key();
  expect((await svc.api('GET', '/sites', { token: other.token })).status).toBe(200);
});

test('a refused token never spends a budget: 401 comes before the limit', async () => {
  for (let i = 0; i < 8; i++) expect((await svc.api('GET', '/sites', { token: 'garbage' })).status).toBe(401);
});

describe('with several API processes', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await testRedis('rl');
  });
  afterAll(() => redis.close());

  test('the budget lives in Redis and is shared', async () => {
    const processA = new KeyRateLimiter(redis, 4);
    const processB = new KeyRateLimiter(redis, 4);
    await processA.consume('key-1');
    await processB.consume('key-1');
    await processA.consume('key-1');
    await processB.consume('key-1');
    const err = await processA.consume('key-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(429);
    expect((err as AppError).headers?.['Retry-After']).toMatch(/^\d+$/);
  });
});
