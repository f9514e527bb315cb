import { setClock } from '../../core/clock';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';
import { backfillState as backfillOf, connectionOf, until } from '../support/integrations';
import { startGoogleDouble, type ConsoleRow, type GoogleDouble, type ServiceAccountKey } from '../support/google-double';
import { IntegrationRepo, queuedBackfill } from '../../model/integrations';
import { consoleDate, shiftDate } from '../../integrations/search-console';
import { SEARCH_REFRESH_QUEUE } from '../../workers/jobs/search-refresh';
import { refreshSearch } from '../../integrations/search-refresh';

/**
 * Search Console connections end to end: the official client (`@googleapis/searchconsole`, with its
 * service-account token exchange) against a local double of Google's token endpoint and API, the
 * import and the refresh on the real BullMQ workers and Redis, rows read back through /search/*.
 */
let svc: TestService;
let google: GoogleDouble;
const today = consoleDate(Date.now());
const day = (n: number) => shiftDate(today, -n);

beforeAll(async () => {
  google = await startGoogleDouble();
  svc = await startTestService({ TALLY_GOOGLE_API_URL: google.url, TALLY_RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(async () => {
  await svc.stop();
  await google.close();
});

const put = (t: Tenant, body: unknown, token = t.token) =>
  svc.api('PUT', `/sites/${t.siteId}/integrations/search_console`, { token, body });
const connection = (t: Tenant) => connectionOf(svc, t);
const backfillState = (t: Tenant, state: string) => backfillOf(svc, t, state);

/** Search figures over `first`..`last` (console dates), read through the API. */
const WINDOW = (first: string, last: string) => new URLSearchParams({ from: `${first}T00:00:00Z`, to: `${shiftDate(last, 1)}T00:00:00Z`, tz: 'UTC' });
const totals = async (t: Tenant, first = day(60), last = today) =>
  (await svc.api('GET', `/sites/${t.siteId}/search/totals?${WINDOW(first, last)}`, { token: t.token })).body.data;
const terms = async (t: Tenant, first = day(60), last = today) =>
  (await svc.api('GET', `/sites/${t.siteId}/search/terms?${WINDOW(first, last)}&limit=50`, { token: t.token })).body.data;

/** What the console's own totals over these rows are. */
function expected(rows: ConsoleRow[]) {
  const clicks = rows.reduce((s, r) => s + r.clicks, 0);
  const impressions = rows.reduce((s, r) => s + r.impressions, 0);
  const position = rows.reduce((s, r) => s + r.position * r.impressions, 0) / impressions;
  return { clicks, impressions, ctr: Number((clicks / impressions).toFixed(4)), position: Number(position.toFixed(2)) };
}

/** Days the import asked the console for, one query per (day, request). */
const dayQueries = (property: string) => google.requests
  .filter((r) => r.path.endsWith(`${property}/searchAnalytics/query`) && (r.body.dimensions as string[]).includes('query'))
  .map((r) => r.body.startDate as string);

/** Queries of the property's daily totals (grouped by date alone): one per import or refresh run, not one per day. */
const totalQueries = (property: string) => google.requests
  .filter((r) => r.path.endsWith(`${property}/searchAnalytics/query`) && (r.body.dimensions as string[]).join() === 'date').length;

describe('connecting', () => {
  let t: Tenant;
  let account: ServiceAccountKey;
  const property = 'sc-domain:connect.example';
  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    account = google.serviceAccount('connect');
    google.grant(account.client_email, property);
  });

  test.each([
    [{}, 'property'],
    [{ property: 'connect.example' }, 'property'],
    [{ property: 'https://connect.example' }, 'property'],
    [{ property: 'sc-domain:connect.example' }, 'service_account'],
    [{ property: 'sc-domain:connect.example', service_account: 'not json' }, 'service_account'],
    [{ property: 'sc-domain:connect.example', service_account: { client_email: 'a@b.iam.gserviceaccount.com', private_key: 'nope' } }, 'service_account.private_key'],
    [{ property: 'sc-domain:connect.example', service_account: { private_key: 'x' } }, 'service_account.client_email'],
    // A URL prefix ends in "/" (Search Console's own form), with no query or fragment.
    [{ property: 'https://connect.example/foo', service_account: {} }, 'property: must be a Search Console property'],
    [{ property: 'http://connect.example/?x=1#f', service_account: {} }, 'property: must be a Search Console property'],
    [{ property: `https://connect.example/${'a/'.repeat(1100)}`, service_account: {} }, 'property: allows at most 2048 characters'],
    [{ property: 5 }, 'property: must be a string'],
    [{ property: 'sc-domain:connect.example', service_account: { client_email: 'a@b.iam.gserviceaccount.com', private_key: 5 } }, 'service_account.private_key: must be a string'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await put(t, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(field);
  });

  test('a key Google refuses, a property the account may not read, an unverified one: 400s that say so; nothing stored', async () => {
    const gone = google.serviceAccount('gone');
    google.grant(gone.client_email, property);
    google.deleteKey(gone.client_email);
    const refused = await put(t, { property, service_account: gone });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^service_account: Google refused this key/);

    const other = await put(t, { property: 'sc-domain:not-granted.example', service_account: account });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toContain(`property: ${account.client_email} may not read sc-domain:not-granted.example`);

    google.grant(account.client_email, 'https://unverified.example/', 'siteUnverifiedUser');
    const unverified = await put(t, { property: 'https://unverified.example/', service_account: account });
    expect(unverified.status).toBe(400);
    expect(unverified.body.error.message).toMatch(/not verified/);
    expect(await connection(t)).toBeUndefined();
  });

  test('a domain property is read in lower case, as Search Console names it (an upper-case one is the same property)', async () => {
    const res = await put(t, { property: 'sc-domain:Not-Granted.Example', service_account: account });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(`property: ${account.client_email} may not read sc-domain:not-granted.example`);
  });

  test('Google unreachable while checking is 503 provider_unavailable with Retry-After, not a 500', async () => {
    google.failNext(4, { path: '/webmasters/v3/sites/' }); // the client's try and its three retries
    const res = await put(t, { property, service_account: account });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('provider_unavailable');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(await connection(t)).toBeUndefined();
  });

  test('a site connected to another provider is 409 naming it; the unknown-provider 404 lists search_console', async () => {
    await new IntegrationRepo(svc.running.ctx.store).update(t.siteId, () => ({
      site_id: t.siteId, provider: 'stripe', account: '', credentials: '', webhook_secret: '', connected_at: '2026-01-01 00:00:00.000',
      webhook_last_at: null, ...queuedBackfill(t.siteId, []), backfill_state: 'completed',
    }));
    const res = await put(t, { property, service_account: account });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(res.body.error.message).toContain('connected to stripe');
    expect((await connection(t)).provider).toBe('stripe');
    expect((await svc.api('DELETE', `/sites/${t.siteId}/integrations/stripe`, { token: t.token })).status).toBe(200);

    const unknown = await svc.api('PUT', `/sites/${t.siteId}/integrations/bing`, { token: t.token, body: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('search_console');
  });

  test('the key file may be sent as its text; the answer and the listing never hold the key', async () => {
    const extra = await put(t, { property, service_account: account, secret_key: 'sk_test_abcdefghijkl' });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('"secret_key"');
    const res = await put(t, { property, service_account: JSON.stringify(account) });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ site_id: t.siteId, provider: 'search_console', account: property, webhook: { configured: false } });
    const listed = await backfillState(t, 'completed');
    expect(listed.backfill.counts).toEqual({ days: 0, rows: 0, pages: 0 });
    const all = JSON.stringify([res.body, (await svc.api('GET', '/integrations', { token: t.token })).body]);
    expect(all).not.toContain('PRIVATE KEY');
    expect(all).not.toContain(account.private_key_id);
    // No webhooks for this provider.
    const hook = await request('POST', `${svc.base}/webhooks/search_console/${t.siteId}`, { raw: '{}', headers: { 'content-type': 'application/json' } });
    expect(hook.status).toBe(404);
  });
});

describe('the import, the refresh, re-sync and disconnect', () => {
  let t: Tenant;
  let account: ServiceAccountKey;
  const property = 'https://www.shop.example/';
  let rows: ConsoleRow[];
  const PAGED = day(9); // a day with more rows than one page of the API holds

  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    account = google.serviceAccount('shop');
    google.grant(account.client_email, property, 'siteOwner');
    rows = google.rows(property);
    rows.push(
      { date: day(40), query: 'tally', page: 'https://www.shop.example/', clicks: 10, impressions: 100, position: 2 },
      { date: day(40), query: 'web analytics', page: 'https://www.shop.example/pricing', clicks: 3, impressions: 300, position: 11.5 },
      // Two URLs the table keeps as one path (query strings are not paths): summed, position weighted.
      { date: day(2), query: 'tally', page: 'https://www.shop.example/docs?ref=a', clicks: 4, impressions: 40, position: 3 },
      { date: day(2), query: 'tally', page: 'https://www.shop.example/docs?ref=b', clicks: 1, impressions: 10, position: 8 },
      { date: day(1), query: 'tally pricing', page: 'https://www.shop.example/pricing', clicks: 2, impressions: 20, position: 1.5 },
      { date: day(1), query: 'cheap analytics', page: 'https://www.shop.example/', clicks: 0, impressions: 30, position: 25 },
      // Anonymised queries: in the console's totals, never in its rows by query.
      { date: day(40), query: null, page: 'https://www.shop.example/', clicks: 2, impressions: 70, position: 30 },
      { date: day(1), query: null, page: 'https://www.shop.example/pricing', clicks: 1, impressions: 15, position: 9 },
      ...Array.from({ length: 25_010 }, (_, i) => ({
        date: PAGED, query: `long tail ${i}`, page: `https://www.shop.example/p/${i % 97}`, clicks: i % 3, impressions: 1 + (i % 5), position: 1 + (i % 40),
      })),
    );
    google.firstIncompleteDate = day(1);
  });

  test('imports every day with data, newest first, every page of a day; totals (anonymised queries included) and terms match the console', async () => {
    expect((await put(t, { property, service_account: account })).status).toBe(200);
    const done = await backfillState(t, 'completed');
    // 4 days; the paged day summed per (term, path) is 25,010 rows; /docs twice is one row.
    expect(done.backfill.counts).toEqual({ days: 4, rows: 2 + 25_010 + 1 + 2, pages: 5 });
    expect(done.backfill.error).toBeNull();
    expect(dayQueries(property)).toEqual([day(1), day(2), PAGED, PAGED, day(40)]);

    expect(await totals(t)).toEqual({ ...expected(rows), partial: true });
    expect(await totals(t, day(40), day(10))).toEqual({ ...expected(rows.filter((r) => r.date === day(40))), partial: false });
    const docs = (await terms(t, day(2), day(2)))[0];
    expect(docs).toMatchObject({ term: 'tally', clicks: 5, impressions: 50, position: 4 }); // (3 x 40 + 8 x 10) / 50
    expect(docs.pages).toEqual([{ hostname: 'www.shop.example', path: '/docs', clicks: 5 }]);
  });

  test('the refresh re-imports recent days whole: a day turned final, a term gone, a new day', async () => {
    const gone = rows.findIndex((r) => r.query === 'cheap analytics');
    rows.splice(gone, 1);
    rows.find((r) => r.query === 'tally pricing')!.clicks = 7;
    rows.push({ date: today, query: 'tally', page: 'https://www.shop.example/', clicks: 1, impressions: 9, position: 4 });
    google.firstIncompleteDate = today;
    const before = dayQueries(property).length;
    await svc.running.ctx.queues.enqueue(SEARCH_REFRESH_QUEUE, {}, `refresh-${Date.now()}`);
    // Days go newest first, each stored whole before the next is asked for: once the oldest of the
    // five is asked for, the four newer ones are done.
    const asked = await until('the refresh to reach its oldest day', async () => dayQueries(property).slice(before), (d) => d.includes(day(4)));
    expect(asked).toEqual([today, day(1), day(2), day(3), day(4)]);

    const recent = await totals(t, day(2), today);
    expect(recent).toEqual({ ...expected(rows.filter((r) => r.date >= day(2))), partial: true });
    expect((await terms(t, day(1), day(1))).map((r: { term: string }) => r.term)).toEqual(['tally pricing']);
    expect((await totals(t, day(2), day(1)))!.partial).toBe(false);
    // The old days were not asked for again.
    expect(dayQueries(property).filter((d) => d === day(40))).toHaveLength(1);
  });

  test('a refresh refused by Google shows its error on GET /integrations until one succeeds', async () => {
    google.revoke(account.client_email, property);
    await svc.running.ctx.queues.enqueue(SEARCH_REFRESH_QUEUE, {}, `refresh-${Date.now()}`);
    const failed = await until('refresh error', () => connection(t), (c) => c?.backfill.error !== null);
    expect(failed.backfill).toMatchObject({ state: 'completed', error: expect.stringMatching(/may no longer read the property/) });

    google.grant(account.client_email, property, 'siteOwner');
    await svc.running.ctx.queues.enqueue(SEARCH_REFRESH_QUEUE, {}, `refresh-${Date.now()}`);
    await until('refresh error cleared', () => connection(t), (c) => c?.backfill.error === null);
  });

  test('an import that fails part way resumes after the last stored day; nothing is counted twice', async () => {
    const before = dayQueries(property).length;
    const totalsBefore = totalQueries(property);
    // The re-sync's one query of daily totals passes, today's and day 1's rows pass, day 2's rows fail
    // once (this property's requests only: the other suite's site may still be being refreshed).
    google.failNext(1, { path: `${property}/searchAnalytics`, after: 3 });
    expect((await svc.api('POST', `/sites/${t.siteId}/integrations/search_console/resync`, { token: t.token })).status).toBe(202);
    const done = await until('re-import', () => connection(t), (c) => c?.backfill.state === 'completed' && c.backfill.counts.days === 5, 60_000);
    expect(done.backfill.counts).toEqual({ days: 5, rows: 1 + 1 + 1 + 25_010 + 2, pages: 6 });
    // today and day 1 (stored before the failure) once; day 2 failed, then asked again; the rest once.
    expect(dayQueries(property).slice(before)).toEqual([today, day(1), day(2), day(2), PAGED, PAGED, day(40)]);
    expect(totalQueries(property) - totalsBefore).toBe(2); // the run that failed and the one that resumed
    expect(await totals(t)).toEqual({ ...expected(rows), partial: true });
  });

  test('re-sync clears what the console no longer has; disconnect keeps rows but the reports say nothing', async () => {
    const old = rows.filter((r) => r.date === day(40));
    rows.splice(0, rows.length, ...rows.filter((r) => r.date !== day(40)));
    expect((await svc.api('POST', `/sites/${t.siteId}/integrations/search_console/resync`, { token: t.token })).status).toBe(202);
    await until('re-sync', () => connection(t), (c) => c?.backfill.state === 'completed' && c.backfill.counts.days === 4);
    expect(await totals(t, day(40), day(40))).toBeNull();
    expect(await totals(t)).toEqual({ ...expected(rows), partial: true });
    rows.push(...old);

    expect((await svc.api('DELETE', `/sites/${t.siteId}/integrations/search_console`, { token: t.token })).status).toBe(200);
    expect(await connection(t)).toBeUndefined();
    expect(await totals(t)).toBeNull();
    expect((await svc.api('POST', `/sites/${t.siteId}/integrations/search_console/resync`, { token: t.token })).status).toBe(404);
  });
});

describe('changing the property', () => {
  const first = 'sc-domain:first.example';
  const second = 'sc-domain:second.example';
  let t: Tenant;
  let account: ServiceAccountKey;
  const firstRows = (): ConsoleRow[] => [
    { date: day(3), query: 'first thing', page: 'https://first.example/', clicks: 7, impressions: 70, position: 2 },
    { date: day(20), query: 'only the first has this day', page: 'https://first.example/old', clicks: 5, impressions: 50, position: 4 },
  ];
  const secondRows = (): ConsoleRow[] => [{ date: day(3), query: 'second thing', page: 'https://second.example/', clicks: 40, impressions: 80, position: 1 }];
  const connect = async (property: string) => {
    expect((await put(t, { property, service_account: account })).status).toBe(200);
    return until(`import of ${property}`, () => connection(t), (c) => c?.account === property && c.backfill.state === 'completed');
  };

  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    account = google.serviceAccount('mover');
    for (const property of [first, second]) google.grant(account.client_email, property, 'siteOwner');
    google.rows(first).push(...firstRows());
    google.rows(second).push(...secondRows());
    // The console still collects yesterday and today: windows reaching them are partial, whatever rows they hold.
    google.firstIncompleteDate = day(1);
  });

  test('a re-key to another property clears the first one\'s rows and imports the second: two properties are never summed', async () => {
    await connect(first);
    expect(await totals(t)).toEqual({ ...expected(firstRows()), partial: true });
    const moved = await connect(second);
    expect(moved.backfill.counts).toMatchObject({ days: 1 });
    expect(await totals(t)).toEqual({ ...expected(secondRows()), partial: true });
    // The first property's cleared days do not move where period=all starts (the site has no events).
    const all = await svc.api('GET', `/sites/${t.siteId}/search/totals?period=all&tz=UTC`, { token: t.token });
    expect(all.body.meta.range.from.slice(0, 10)).toBe(day(3));
    expect((await terms(t)).map((r: { term: string }) => r.term)).toEqual(['second thing']);
  });

  test('disconnecting and connecting another property shows none of the earlier property\'s days', async () => {
    expect((await svc.api('DELETE', `/sites/${t.siteId}/integrations/search_console`, { token: t.token })).status).toBe(200);
    await connect(first);
    expect(await totals(t)).toEqual({ ...expected(firstRows()), partial: true });
    expect((await terms(t)).map((r: { term: string }) => r.term).sort()).toEqual(['first thing', 'only the first has this day']);
    // The site has no events: period=all starts at its first console day, not today.
    const all = await svc.api('GET', `/sites/${t.siteId}/search/totals?period=all&tz=America/Los_Angeles`, { token: t.token });
    expect(all.body.data).toEqual({ ...expected(firstRows()), partial: true });
  });

  test('a re-sync whose access was withdrawn is 409 credentials_refused and clears nothing', async () => {
    google.revoke(account.client_email, first);
    const res = await svc.api('POST', `/sites/${t.siteId}/integrations/search_console/resync`, { token: t.token });
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'credentials_refused', message: expect.stringMatching(/^Search Console refused the stored credentials \(property: .* may not read sc-domain:first\.example.*nothing was cleared/) });
    expect(await totals(t)).toEqual({ ...expected(firstRows()), partial: true });
    expect((await connection(t))!.backfill.state).toBe('completed');
    google.grant(account.client_email, first, 'siteOwner');
  });

  /** A refresh that read the first property's days before a re-key writes none of them after its purge. */
  test('a refresh held across a re-key to another property writes nothing of the first', async () => {
    // Connected to the first property, its import complete (the tests above).
    expect((await connection(t))).toMatchObject({ account: first, backfill: { state: 'completed' } });
    const release = google.holdNext('first.example/searchAnalytics/query');
    const asked = google.requests.length;
    const refresh = refreshSearch({ ...svc.running.ctx, enqueue: async () => undefined });
    await until('the refresh to ask for the first property', async () => google.requests.slice(asked), (r) => r.some((q) => q.path.includes('first.example/searchAnalytics')));
    await connect(second);
    release();
    await refresh;
    expect(await totals(t)).toEqual({ ...expected(secondRows()), partial: true });
    expect((await terms(t)).map((r: { term: string }) => r.term)).toEqual(['second thing']);
  });
});

describe('a day left not final beyond the last five days', () => {
  test('is refreshed with the recent days until the console calls it final', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const account = google.serviceAccount('late');
    const property = 'sc-domain:late.example';
    google.grant(account.client_email, property);
    const late = { date: day(8), query: 'late', page: 'https://late.example/', clicks: 1, impressions: 10, position: 5 };
    google.rows(property).push(late);
    google.firstIncompleteDate = day(8);
    expect((await put(t, { property, service_account: account })).status).toBe(200);
    await backfillState(t, 'completed');
    expect(await totals(t, day(8), day(8))).toMatchObject({ clicks: 1, partial: true });

    late.clicks = 4;
    google.firstIncompleteDate = undefined;
    const before = dayQueries(property).length;
    await svc.running.ctx.queues.enqueue(SEARCH_REFRESH_QUEUE, {}, `refresh-${Date.now()}`);
    const refreshed = await until('day 8 refreshed', () => totals(t, day(8), day(8)), (v) => v?.clicks === 4);
    expect(refreshed.partial).toBe(false);
    // Today back to the oldest day stored as not final, each once.
    expect(dayQueries(property).slice(before)).toEqual(Array.from({ length: 9 }, (_, i) => day(i)));
  });
});

describe('refreshes that failed or did not run for more than five days', () => {
  afterEach(() => setClock(null));

  test('the days that arrived meanwhile are read once a refresh succeeds; then the range is counted from that refresh', async () => {
    const refresh = () => refreshSearch({ ...svc.running.ctx, enqueue: async () => undefined });
    const start = '2026-05-20';
    const at = (n: number) => shiftDate(start, n);
    setClock(`${start}T20:00:00Z`); // 13:00 in Pacific time: console date 05-20
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const account = google.serviceAccount('quiet');
    const property = 'sc-domain:quiet.example';
    google.grant(account.client_email, property);
    // A quiet property: nothing since 05-15, so no day stored as not final holds the refresh's range open.
    const rows = google.rows(property);
    rows.push({ date: at(-5), query: 'quiet', page: 'https://quiet.example/', clicks: 1, impressions: 10, position: 4 });
    google.firstIncompleteDate = undefined;
    expect((await put(t, { property, service_account: account })).status).toBe(200);
    await backfillState(t, 'completed');

    // Access withdrawn for nine days: every daily refresh is refused, while the console collects 05-21..05-29.
    google.revoke(account.client_email, property);
    for (let n = 1; n <= 9; n++) {
      setClock(`${at(n)}T20:00:00Z`);
      await refresh();
      rows.push({ date: at(n), query: `day ${n}`, page: 'https://quiet.example/', clicks: n, impressions: 10 * n, position: 5 });
    }
    expect((await connection(t))!.backfill.error).toMatch(/may no longer read the property/);
    google.grant(account.client_email, property);
    const before = dayQueries(property).length;
    await refresh();
    expect((await connection(t))!.backfill.error).toBeNull();
    // Back to 4 days before the last refresh that succeeded (the import's, on 05-20), not only to 05-25.
    expect(dayQueries(property).slice(before)).toEqual(Array.from({ length: 14 }, (_, i) => at(9 - i)));
    expect(await totals(t, at(-30), at(9))).toEqual({ ...expected(rows), partial: false });

    setClock(`${at(10)}T20:00:00Z`);
    const next = dayQueries(property).length;
    await refresh();
    // A day later: 4 days back from yesterday's successful refresh (a day still without its first rows then may gain them).
    expect(dayQueries(property).slice(next)).toEqual(Array.from({ length: 6 }, (_, i) => at(10 - i)));
  });
});

describe('partial', () => {
  test('a window reaching the days the console still collects is partial even where those days have no rows yet', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const account = google.serviceAccount('collecting');
    const property = 'sc-domain:collecting.example';
    google.grant(account.client_email, property);
    // A quiet property: its last impressions 5 days ago (final), and the console still collecting the last 2 days.
    google.rows(property).push({ date: day(5), query: 'quiet', page: 'https://collecting.example/', clicks: 1, impressions: 10, position: 4 });
    google.firstIncompleteDate = day(2);
    expect((await put(t, { property, service_account: account })).status).toBe(200);
    await backfillState(t, 'completed');
    expect(await totals(t, day(6), today)).toMatchObject({ clicks: 1, partial: true });
    expect(await totals(t, day(6), day(2))).toMatchObject({ clicks: 1, partial: true });
    expect(await totals(t, day(6), day(3))).toMatchObject({ clicks: 1, partial: false });

    // A refresh reads the console's word again: once it says every day is final, nothing is partial.
    google.firstIncompleteDate = undefined;
    await refreshSearch({ ...svc.running.ctx, enqueue: async () => undefined });
    expect(await totals(t, day(6), today)).toMatchObject({ clicks: 1, partial: false });
    // While a refresh is refused, the last word stands.
    google.firstIncompleteDate = day(1);
    google.revoke(account.client_email, property);
    await refreshSearch({ ...svc.running.ctx, enqueue: async () => undefined });
    expect(await totals(t, day(6), today)).toMatchObject({ clicks: 1, partial: false });
    google.grant(account.client_email, property);
    await refreshSearch({ ...svc.running.ctx, enqueue: async () => undefined });
    expect(await totals(t, day(6), today)).toMatchObject({ clicks: 1, partial: true });
  });
});

describe('page paths', () => {
  test('a search page is spelled as the same page is in the event reports (decoded), so a term\'s page lines up with it', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'], domain: 'paths.example' });
    const account = google.serviceAccount('paths');
    google.grant(account.client_email, 'sc-domain:paths.example');
    const page = 'https://paths.example/blog/caf%C3%A9/a%2Fb';
    google.rows('sc-domain:paths.example').push({ date: day(2), query: 'café', page, clicks: 3, impressions: 9, position: 2 });
    expect((await put(t, { property: 'sc-domain:paths.example', service_account: account })).status).toBe(200);
    await backfillState(t, 'completed');
    await svc.admin('events import', { site: t.siteId }, JSON.stringify({ ts: `${day(2)}T10:00:00Z`, name: 'pageview', url: page, visitor: 'v' }));
    const window = WINDOW(day(2), day(2));
    const paths = (await svc.api('GET', `/sites/${t.siteId}/breakdowns/path?${window}`, { token: t.token })).body.data;
    // decodeURI, as ingest: reserved characters (%2F) stay encoded, so segments never change.
    expect(paths.map((r: { label: string }) => r.label)).toEqual(['/blog/café/a%2Fb']);
    expect((await terms(t, day(2), day(2)))[0].pages[0].path).toBe(paths[0].label);
    const pairs = (await svc.api('GET', `/sites/${t.siteId}/search/term-pages?${window}&terms=caf%C3%A9`, { token: t.token })).body.data;
    expect(pairs[0].path).toBe(paths[0].label);
  });
});
