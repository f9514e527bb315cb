import { AuthCache, LocalGeneration, type ResolvedKey } from '../../model/auth-cache';

/** AuthCache.known: what a refused address may use, at no cost for tokens the cache never saw. */
const key = { principal: { keyId: 'k1' }, expiresAtMs: null } as unknown as ResolvedKey;

class CountingGeneration extends LocalGeneration {
  reads = 0;
  override current(): Promise<string> {
    this.reads++;
    return super.current();
  }
}

test('an unknown token is answered from the map alone; a known one is served until the generation moves', async () => {
  const generation = new CountingGeneration();
  const cache = new AuthCache(generation);
  expect(await cache.known('never-seen')).toBeUndefined();
  expect(generation.reads).toBe(0);
  await cache.key('h1', async () => key);
  expect(await cache.known('h1')).toBe(key);
  await cache.invalidate(); // a revoke, say
  expect(await cache.known('h1')).toBeUndefined();
});
