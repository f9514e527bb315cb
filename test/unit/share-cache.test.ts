import { FeedCache } from '../../public/cache';

test('identical requests within the TTL share one computation; failures are not kept', async () => {
  const cache = new FeedCache(60_000, 2);
  let runs = 0;
  const compute = async () => ++runs;
  expect(await cache.get('a', compute)).toBe(1);
  expect(await cache.get('a', compute)).toBe(1);
  expect(await cache.get('b', compute)).toBe(2);
  expect(await cache.get('c', compute)).toBe(3); // full: the oldest entry ('a') makes room
  expect(await cache.get('a', compute)).toBe(4);
  await expect(cache.get('x', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  await new Promise((r) => setImmediate(r));
  expect(await cache.get('x', compute)).toBe(5);
});

test('entries expire after the TTL', async () => {
  const cache = new FeedCache(5);
  let runs = 0;
  await cache.get('k', async () => ++runs);
  await new Promise((r) => setTimeout(r, 20));
  expect(await cache.get('k', async () => ++runs)).toBe(2);
});
