import { SiteDirectory } from '../../../ingest/live/sites';
import type { RedisHandle } from '../../../infra/redis';
import { RedisGeneration } from '../../../infra/redis-generation';
import { AuthCache } from '../../../model/auth-cache';
import type { Site } from '../../../core/domain';
import { Repos } from '../../../model/repos';

/**
 * Server mode's caches (ingest's site directory, the auth cache) read the shared metadata generation
 * (RedisGeneration) before a cached lookup. A stalled Redis (paused, or a connection dead without a
 * reset) answers no GET: the lookup must not wait for it (the client's own give-up, infra/redis.ts, is
 * tested over a real Redis in test/api/redis-stall.test.ts).
 */
function stalledRedis() {
  const state = { gets: 0, answer: (_gen: string) => undefined as void };
  const client = {
    get: () => {
      state.gets++;
      return new Promise<string>((resolve) => (state.answer = resolve));
    },
  };
  const handle = { prefix: 'stalled', isUp: () => true, client } as unknown as RedisHandle;
  return { state, generation: new RedisGeneration(handle) };
}

test('a generation GET that does not answer: lookups go on (generation unknown), and no second GET piles up behind it', async () => {
  const { state, generation } = stalledRedis();
  let loads = 0;
  const repos = { siteByDomain: async () => void loads++ } as unknown as Repos;
  const sites = new SiteDirectory(repos, generation);
  try {
    const started = Date.now();
    await expect(Promise.resolve(sites.lookup('a.example'))).resolves.toBeNull();
    expect(Date.now() - started).toBeLessThan(3000);
    // While that GET is unanswered, lookups do not send another (nor wait).
    await expect(Promise.resolve(sites.lookup('b.example'))).resolves.toBeNull();
    expect(state.gets).toBe(1);
    expect(loads).toBe(2);
    // Redis answers again: the next lookup reads the generation.
    state.answer('7');
    await new Promise((r) => setImmediate(r));
    await sites.lookup('a.example');
    expect(state.gets).toBe(2);
  } finally {
    sites.close();
  }
});

test('the auth cache over a stalled generation loads the key instead of waiting, and serves nothing cached meanwhile', async () => {
  const { state, generation } = stalledRedis();
  const cache = new AuthCache(generation);
  let loads = 0;
  const load = async () => {
    loads++;
    return null;
  };
  const started = Date.now();
  await expect(cache.key('h1', load)).resolves.toBeNull();
  expect(Date.now() - started).toBeLessThan(3000);
  // Unknown generation: nothing is served from the cache, so the same key is loaded again.
  await expect(cache.key('h1', load)).resolves.toBeNull();
  expect(loads).toBe(2);
  expect(state.gets).toBe(1);
});

test('a load under way when the site is saved does not file the settings it read before the save', async () => {
  const before: Site = {
    id: 's1', org_id: 'o1', domain: 'shop.example', name: 'Shop', timezone: 'UTC', currency: 'USD', active: true,
    excluded_paths: [], allowed_hostnames: [], excluded_hostnames: [], excluded_countries: [], session_strategy: 'salted_hash',
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  };
  let answer!: (site: Site) => void;
  const repos = { siteByDomain: () => new Promise<Site>((r) => (answer = r)) } as unknown as Repos;
  const sites = new SiteDirectory(repos, undefined);
  try {
    const first = sites.lookup('shop.example');
    // The save lands (this process's Repos.saveSite announces it) while the load above still waits for its row.
    const saved = { ...before, excluded_paths: ['/admin/**'] };
    await Repos.prototype.saveSite.call({ sites: { put: async () => undefined } } as unknown as Repos, saved);
    answer(before);
    await first;
    const now = await sites.lookup('shop.example');
    expect(now?.site.excluded_paths).toEqual(['/admin/**']);
  } finally {
    sites.close();
  }
});
