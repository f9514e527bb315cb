import { request, type HttpResult } from '../support/http';
import { apiCall, makeTenant, startServerMode, type ServerMode, type SmTenant, type TallyProc } from '../support/server-mode';

/**
 * Server mode, what is counted or looked up per request across api processes
 * (test/support/server-mode.ts: the built dist/main.js on ClickHouse's HTTP interface over the real
 * engine, one database, one Redis prefix), with two `api` processes and no worker: a key's request
 * budget and an address's public-feed budget are one budget whichever process answers
 * (docs/AUTH.md "Rate limit", docs/RESOURCES.md "Public feeds"), and a share board is served, changed,
 * switched off and counted alike on both (docs/RESOURCES.md "Share board"). The failed-authentication
 * budget and the widget are in test/e2e/server-mode-workers.test.ts.
 */
// Every API call of a test's key spends it, polls included: small enough to spend quickly, large
// enough for the other tests' calls.
const KEY_BUDGET = 50;
const FEED_BUDGET = 3;

let sm: ServerMode;
let api1: TallyProc;
let api2: TallyProc;

const api = (p: TallyProc, t: SmTenant, method: string, apiPath: string, body?: unknown): Promise<HttpResult> =>
  apiCall(p, method, apiPath, t.token, body);

/** Each call from an address of its own unless `from` is given: the feed budget is per address. */
let nextAddress = 1;
const fromAddress = (from?: string) => ({ 'x-forwarded-for': from ?? `198.51.100.${nextAddress++}` });

/** The board's page (`''`) or its feed (`'/data?...'`), through `p`. */
const board = (p: TallyProc, slug: string, rest = '', from?: string) =>
  request('GET', `http://127.0.0.1:${p.httpPort}/share/${slug}${rest}`, { headers: fromAddress(from) });

beforeAll(async () => {
  sm = await startServerMode();
  // The proxy's forwarded address is believed: each feed test comes from addresses of its own.
  const env = { TALLY_TRUST_PROXY: '127.0.0.1', TALLY_RATE_LIMIT_PER_MINUTE: String(KEY_BUDGET), TALLY_PUBLIC_FEEDS_PER_MINUTE: String(FEED_BUDGET) };
  [api1, api2] = await sm.startAll([{ name: 'api1', role: 'api', env }, { name: 'api2', role: 'api', env }]);
}, 120_000);

afterAll(async () => {
  await sm?.close();
});

describe("a key's request budget", () => {
  const sites = (p: TallyProc, t: SmTenant) => api(p, t, 'GET', '/sites');
  const remaining = (r: HttpResult) => r.headers['x-ratelimit-remaining'];

  test('counts down across both api processes; past it each refuses 429 with Retry-After, both to the same end of the minute', async () => {
    const t = await makeTenant(api1, 'Budgeted', { scopes: 'analytics:read' });
    const answers: HttpResult[] = [];
    for (let i = 0; i < KEY_BUDGET; i++) answers.push(await sites(i % 2 ? api2 : api1, t));
    expect(answers.map((r) => r.status)).toEqual(Array(KEY_BUDGET).fill(200));
    expect(answers.map(remaining)).toEqual(Array.from({ length: KEY_BUDGET }, (_, i) => String(KEY_BUDGET - 1 - i)));

    const windowEnds: number[] = [];
    for (const p of [api1, api2]) {
      const refused = await sites(p, t);
      const received = Date.now();
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/retry in \d+ s/) } });
      expect(remaining(refused)).toBe('0');
      const retry = Number(refused.headers['retry-after']);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      windowEnds.push(received + retry * 1000);
    }
    // Another key has a budget of its own, one on both.
    const other = await makeTenant(api2, 'Unbudgeted', { scopes: 'analytics:read' });
    expect([remaining(await sites(api2, other)), remaining(await sites(api1, other))]).toEqual([String(KEY_BUDGET - 1), String(KEY_BUDGET - 2)]);
    // One minute, not one per process: both name the end of the window the first request opened, each
    // rounded up to its second (plus the answer's way back here). Waiting it out is not done: a minute of the suite.
    expect(Math.abs(windowEnds[0] - windowEnds[1])).toBeLessThan(1500);
  }, 90_000);

  test('requests at once on both processes: exactly the budget is served, each remaining count once', async () => {
    const t = await makeTenant(api2, 'Crowded', { scopes: 'analytics:read' });
    const answers = await Promise.all(Array.from({ length: 2 * KEY_BUDGET }, (_, i) => sites(i % 2 ? api2 : api1, t)));
    const served = answers.filter((r) => r.status === 200);
    expect(served).toHaveLength(KEY_BUDGET);
    expect(served.map(remaining).sort()).toEqual(Array.from({ length: KEY_BUDGET }, (_, i) => String(i)).sort());
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual(Array(KEY_BUDGET).fill([429, 'rate_limited']));
    expect(refused.every((r) => Number(r.headers['retry-after']) >= 1)).toBe(true);
  }, 90_000);
});

describe('a share board', () => {
  const sharer = (name: string) => makeTenant(api1, name, { scopes: 'analytics:read,settings:read,settings:write' });

  /**
   * Polls `p`'s view_count of `t`'s board until it is `n`: views are written once a second by the
   * process that served them (docs/RESOURCES.md). A read each quarter second, well inside the key's budget.
   */
  async function viewsReach(p: TallyProc, t: SmTenant, n: number): Promise<void> {
    const end = Date.now() + 5000;
    for (;;) {
      const r = await api(p, t, 'GET', `/sites/${t.siteId}/share`);
      expect(r.status).toBe(200);
      if (r.body.data.view_count === n) return;
      if (Date.now() > end) throw new Error(`view_count on ${p.name} is ${r.body.data.view_count}, not ${n}, after 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  test('made through one api process is served by the other at once; its page views add up on both within a second or so', async () => {
    const t = await sharer('Shared board');
    const made = await api(api1, t, 'PUT', `/sites/${t.siteId}/share`, { label: 'Made on api1' });
    expect(made.status).toBe(200);
    const slug = made.body.data.slug as string;
    expect((await board(api2, slug)).status).toBe(200);
    const feed = await board(api2, slug, '/data?period=last24h');
    expect([feed.status, feed.body.data?.label, feed.body.data?.site?.domain]).toEqual([200, 'Made on api1', t.domain]);
    expect((await board(api1, slug)).status).toBe(200);
    expect((await board(api2, slug)).status).toBe(200);
    // The feed is not a view, nor is a HEAD.
    expect((await request('HEAD', `http://127.0.0.1:${api1.httpPort}/share/${slug}`)).status).toBe(200);
    await viewsReach(api1, t, 3);
    await viewsReach(api2, t, 3);

    // A change saved on one process shows on the other's next feed (the memo is keyed by the board as saved).
    expect((await api(api2, t, 'PUT', `/sites/${t.siteId}/share`, { label: 'Renamed on api2', pages: false })).status).toBe(200);
    const changed = await board(api1, slug, '/data?period=last24h');
    expect(changed.status).toBe(200);
    expect(changed.body.data.label).toBe('Renamed on api2');
    expect(changed.body.data.panels).not.toContain('pages');
  }, 90_000);

  test('switched off on one api process it is gone from the other at once; made again, only the new slug is served, by both', async () => {
    const t = await sharer('Switched off');
    const slug = (await api(api2, t, 'PUT', `/sites/${t.siteId}/share`, {})).body.data.slug as string;
    for (const p of [api1, api2]) expect((await board(p, slug, '/data?period=today')).status).toBe(200); // each process's memo holds it
    const off = await api(api2, t, 'DELETE', `/sites/${t.siteId}/share`);
    expect([off.status, off.body.data.active]).toEqual([200, false]);
    for (const p of [api1, api2]) {
      expect((await board(p, slug)).status).toBe(404);
      const feed = await board(p, slug, '/data?period=today');
      expect([feed.status, feed.body.error?.code]).toEqual([404, 'not_found']);
    }

    const again = await api(api1, t, 'PUT', `/sites/${t.siteId}/share`, {});
    expect(again.status).toBe(200);
    const renewed = again.body.data.slug as string;
    expect(renewed).not.toBe(slug);
    expect(again.body.data.view_count).toBe(0);
    expect((await board(api2, renewed)).status).toBe(200);
    expect((await board(api2, renewed, '/data?period=today')).status).toBe(200);
    for (const p of [api1, api2]) expect((await board(p, slug)).status).toBe(404);
    await viewsReach(api1, t, 1);
  }, 90_000);
});

test("an address's budget for new public figures is one budget across both api processes; memoised answers stay free", async () => {
  const t = await makeTenant(api1, 'Feed budget', { scopes: 'analytics:read,settings:write' });
  const slug = (await api(api1, t, 'PUT', `/sites/${t.siteId}/share`, {})).body.data.slug as string;
  const viewer = '203.0.113.77';
  // Each window to the second is a new computation (docs/RESOURCES.md "Public feeds").
  const to = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString().replace('.000', '');
  const windowFrom = (s: number) => `/data?from=${new Date(Date.parse(to) - 86_400_000 + s * 1000).toISOString().replace('.000', '')}&to=${to}`;
  const statuses: number[] = [];
  for (let s = 0; s < FEED_BUDGET; s++) statuses.push((await board(s % 2 ? api2 : api1, slug, windowFrom(s), viewer)).status);
  expect(statuses).toEqual(Array(FEED_BUDGET).fill(200));
  for (const p of [api1, api2]) {
    const refused = await board(p, slug, windowFrom(10), viewer);
    expect([refused.status, refused.body.error?.code]).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }
  // The window a process computed a moment ago costs it nothing; other addresses are not refused.
  const last = FEED_BUDGET - 1;
  expect((await board(last % 2 ? api2 : api1, slug, windowFrom(last), viewer)).status).toBe(200);
  expect((await board(api2, slug, windowFrom(10))).status).toBe(200);
}, 90_000);
