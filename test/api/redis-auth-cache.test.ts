import type { Principal } from '../../core/domain';
import { connectRedis, type RedisHandle } from '../../infra/redis';
import { RedisGeneration } from '../../infra/redis-generation';
import { AuthCache, type ResolvedKey } from '../../model/auth-cache';
import { freePort, startRedis, stopRedis } from '../support/processes';
import { testRedis } from '../support/redis';

/**
 * Server mode runs several processes over one ClickHouse; the auth cache of each learns of another's
 * metadata write through the Redis generation. Two caches over one Redis play the two processes.
 */
const principal = (keyId: string): Principal => ({
  keyId, orgId: 'o', userId: 'u', scopes: new Set(['analytics:read']), sites: 'all', retentionDays: 30,
});

let redis: RedisHandle;
beforeAll(async () => {
  redis = await testRedis('gen');
});
afterAll(() => redis.close());

function counter(version: { v: string }) {
  let loads = 0;
  return {
    loads: () => loads,
    load: async (): Promise<ResolvedKey> => {
      loads++;
      return { principal: principal(version.v), expiresAtMs: null };
    },
  };
}

test('a write announced by one process drops the other process entries before its next lookup', async () => {
  const a = new AuthCache(new RedisGeneration(redis));
  const b = new AuthCache(new RedisGeneration(redis));
  const db = { v: 'before' };
  const src = counter(db);
  expect((await b.key('h', src.load))?.principal.keyId).toBe('before');
  expect((await b.key('h', src.load))?.principal.keyId).toBe('before');
  expect(src.loads()).toBe(1); // the second lookup was a hit

  db.v = 'after';
  await a.invalidate(); // process A revoked or changed something
  expect((await b.key('h', src.load))?.principal.keyId).toBe('after');
  expect(src.loads()).toBe(2);
});

test('a counter lost with Redis\'s data restarts at a random value, so no process sees its old generation again', async () => {
  const a = new AuthCache(new RedisGeneration(redis));
  const b = new AuthCache(new RedisGeneration(redis));
  const key = `${redis.prefix}:meta-generation`;
  await redis.client.del(key);
  const db = { v: 'cached before the loss' };
  const src = counter(db);
  await a.invalidate();
  expect((await b.key('h', src.load))?.principal.keyId).toBe('cached before the loss');
  const seen = await redis.client.get(key);
  expect(seen).not.toBe('1'); // a missing counter does not start at 0
  // Redis restarts empty; as many writes happen elsewhere as before: a counter from 0 would read the same again.
  await redis.client.del(key);
  db.v = 'written after the loss';
  await a.invalidate();
  expect(await redis.client.get(key)).not.toBe(seen);
  expect((await b.key('h', src.load))?.principal.keyId).toBe('written after the loss');
  // A reader that finds no counter starts one too, at random, and every reader then agrees on it.
  await redis.client.del(key);
  const first = await new RedisGeneration(redis).current();
  expect(first).not.toBe('0');
  expect(await new RedisGeneration(redis).current()).toBe(first);
});

test('a load that raced with an invalidation is not kept', async () => {
  const cache = new AuthCache(new RedisGeneration(redis));
  const db = { v: 'old' };
  let release: (() => void) | undefined;
  const slow = async (): Promise<ResolvedKey> => {
    const seen = db.v;
    await new Promise<void>((r) => (release = r));
    return { principal: principal(seen), expiresAtMs: null };
  };
  const pending = cache.key('h', slow);
  // Wait until the load has really begun (it first reads the generation from Redis), not a fixed time.
  while (!release) await new Promise((r) => setTimeout(r, 5));
  db.v = 'new';
  await cache.invalidate();
  release();
  expect((await pending)?.principal.keyId).toBe('old'); // that request began before the write
  const src = counter(db);
  expect((await cache.key('h', src.load))?.principal.keyId).toBe('new');
  expect(src.loads()).toBe(1);
});

test('with the generation unknown (Redis down) every lookup loads, and old entries are dropped afterwards', async () => {
  const port = await freePort();
  const child = await startRedis(port);
  const own = connectRedis(`redis://127.0.0.1:${port}`, 'gen');
  await new Promise<void>((resolve) => own.onUp(resolve));
  const cache = new AuthCache(new RedisGeneration(own));
  const db = { v: 'v1' };
  const src = counter(db);
  await cache.key('h', src.load);
  await cache.key('h', src.load);
  expect(src.loads()).toBe(1);

  await stopRedis(child);
  for (let i = 0; i < 50 && own.isUp(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(own.isUp()).toBe(false);
  db.v = 'v2';
  expect((await cache.key('h', src.load))?.principal.keyId).toBe('v2');
  expect((await cache.key('h', src.load))?.principal.keyId).toBe('v2');
  expect(src.loads()).toBe(3); // bypassed: both went to storage
  await own.close();
});

test('sites come back as copies, so a caller cannot alter the cached one', async () => {
  const cache = new AuthCache(new RedisGeneration(redis));
  const site = { id: 's', excluded_paths: ['/a'] } as never;
  const first = await cache.site('s', async () => site);
  first!.excluded_paths.push('/mutated');
  const second = await cache.site('s', async () => undefined);
  expect(second!.excluded_paths).toEqual(['/a']);
});

