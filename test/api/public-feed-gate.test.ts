import type { AppContext } from '../../api/context';
import { setClock } from '../../core/clock';
import { AppError } from '../../core/errors';
import type { RedisHandle } from '../../infra/redis';
import { FeedCache } from '../../public/cache';
import { FeedGate } from '../../public/gate';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';
import { boardFixture } from './share-fixture';
import { testRedis } from '../support/redis';

/**
 * Public feeds need no key, and a board's viewer picks its window to the second: every new window
 * is a whole board of reports. What one anonymous address may make the engine do is bounded.
 */
let svc: TestService;
let t: Tenant;

beforeAll(async () => {
  setClock('2026-03-10T15:00:00Z');
  svc = await startTestService({ TALLY_PUBLIC_FEEDS_PER_MINUTE: '3', TALLY_TRUST_PROXY: 'loopback' });
  t = await svc.tenant({ scopes: ['settings:write', 'analytics:read', 'funnels:write', 'goals:write'] });
  await boardFixture(svc, t);
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

const feed = (slug: string, fromSecond: number, ip: string) =>
  request('GET', `${svc.base}/share/${slug}/data?from=2026-03-05T00:00:0${fromSecond}Z&to=2026-03-10T00:00:00Z`, { headers: { 'x-forwarded-for': ip } });

test('new windows spend the address budget, 429 with Retry-After past it; memoised answers and other addresses are not refused', async () => {
  const slug = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: {} })).body.data.slug;
  const statuses = [];
  for (let s = 1; s <= 4; s++) statuses.push((await feed(slug, s, '198.51.100.7')).status);
  expect(statuses).toEqual([200, 200, 200, 429]);
  const refused = await feed(slug, 5, '198.51.100.7');
  expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/retry in \d+ s/) } });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  // A window computed a moment ago costs nothing: the board stays viewable.
  expect((await feed(slug, 1, '198.51.100.7')).status).toBe(200);
  expect((await feed(slug, 6, '198.51.100.8')).status).toBe(200);
  // Widget cards draw on the same budget.
  await svc.api('PUT', `/sites/${t.siteId}/widget`, { token: t.token, body: { enabled: true } });
  const card = (await svc.api('GET', `/sites/${t.siteId}/widget`, { token: t.token })).body.data.slug;
  expect((await request('GET', `${svc.base}/widget/${card}.json`, { headers: { 'x-forwarded-for': '198.51.100.7' } })).status).toBe(429);
  expect((await request('GET', `${svc.base}/widget/${card}.json`, { headers: { 'x-forwarded-for': '198.51.100.9' } })).status).toBe(200);
});

describe('the process\'s slots', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await testRedis('gate');
  });
  afterAll(() => redis.close());

  test("a refused address's 429 never becomes the answer another viewer of the same window shares", async () => {
    const gate = FeedGate.of({ redis, config: { publicFeedsPerMinute: 1 } } as unknown as AppContext);
    const cache = new FeedCache(15_000);
    let computed = 0;
    const board = async () => ++computed;
    expect(await gate.serve(cache, 'window-a', '198.51.100.30', board)).toBe(1); // spends the address's one view
    // The same moment: the refused address asks first for a window nobody has computed, a viewer right after.
    const [refused, viewer] = await Promise.allSettled([
      gate.serve(cache, 'window-b', '198.51.100.30', board), gate.serve(cache, 'window-b', '198.51.100.31', board),
    ]);
    expect(refused).toMatchObject({ status: 'rejected', reason: { status: 429, code: 'rate_limited' } });
    expect(viewer).toEqual({ status: 'fulfilled', value: 2 });
    // A memoised answer costs nothing, even to the refused address.
    expect(await gate.serve(cache, 'window-b', '198.51.100.30', board)).toBe(2);
  });

  test('two computations run at once, sixteen wait in order, the next is 503 overloaded', async () => {
    const gate = FeedGate.of({ redis, config: { publicFeedsPerMinute: 1000 } } as unknown as AppContext);
    const started: number[] = [];
    const finish: (() => void)[] = [];
    const job = (i: number) => () => {
      started.push(i);
      return new Promise<number>((resolve) => finish.push(() => resolve(i)));
    };
    const admitted = Array.from({ length: 18 }, (_, i) => gate.run(job(i)));
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toEqual([0, 1]);
    const refused = await gate.run(job(99)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 503, code: 'overloaded', headers: { 'Retry-After': '2' } });
    // Each finished computation hands its slot to the next in line.
    for (let done = 0; done < 18; done++) {
      finish[done]();
      await admitted[done];
    }
    expect(started).toEqual(Array.from({ length: 18 }, (_, i) => i));
    expect(await Promise.all(admitted)).toEqual(started);
    // Slots are all back: two new computations start at once.
    const again = [gate.run(job(100)), gate.run(job(101))];
    await new Promise((r) => setTimeout(r, 50));
    expect(started.slice(-2)).toEqual([100, 101]);
    finish.slice(-2).forEach((f) => f());
    await Promise.all(again);
  });
});
