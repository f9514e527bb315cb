import { isoToCh } from '../../clickhouse/meta';
import { reportSuite, type ReportSuite } from './reports-support';

/**
 * `/search/*` over search-console rows (PRODUCT.md §5, spec "Search"), now = Wed 2026-05-20 12:00 UTC.
 * Rows are written to the tables the console import fills (integrations, search_console), the way the
 * report suites write payments.
 *  05-13 (before last7d): "tally" /            10 clicks, 100 impressions, position 2
 *  05-14: "tally" /                  4 clicks,  40 impressions, position 3
 *         "tally" /pricing           6 clicks,  60 impressions, position 1
 *         "tally, analytics" /docs   1 click,   10 impressions, position 8  (a comma inside a term)
 *  05-19: "tally" /blog              2 clicks,  50 impressions, position 4
 *         "tally" /about             2 clicks,   5 impressions, position 6
 *         "web analytics" /          3 clicks, 300 impressions, position 12
 *  05-20 (not final yet): "web analytics" / 1 click, 100 impressions, position 10
 */
let s: ReportSuite;
let unconnected: { siteId: string; token: string };

interface Row { date: string; term: string; path: string; clicks: number; impressions: number; position: number; final?: boolean }
const ROWS: Row[] = [
  { date: '2026-05-13', term: 'tally', path: '/', clicks: 10, impressions: 100, position: 2 },
  { date: '2026-05-14', term: 'tally', path: '/', clicks: 4, impressions: 40, position: 3 },
  { date: '2026-05-14', term: 'tally', path: '/pricing', clicks: 6, impressions: 60, position: 1 },
  { date: '2026-05-14', term: 'tally, analytics', path: '/docs', clicks: 1, impressions: 10, position: 8 },
  { date: '2026-05-19', term: 'tally', path: '/blog', clicks: 2, impressions: 50, position: 4 },
  { date: '2026-05-19', term: 'tally', path: '/about', clicks: 2, impressions: 5, position: 6 },
  { date: '2026-05-19', term: 'web analytics', path: '/', clicks: 3, impressions: 300, position: 12 },
  { date: '2026-05-20', term: 'web analytics', path: '/', clicks: 1, impressions: 100, position: 10, final: false },
];

async function connect(siteId: string) {
  await s.svc.running.ctx.store.insert('integrations', [{
    site_id: siteId, provider: 'search_console', credentials: '', webhook_secret: '', connected_at: isoToCh('2026-05-01T00:00:00Z'),
    backfill_state: 'completed', backfill_counts: '{}', backfill_started_at: null, backfill_finished_at: null, backfill_error: null, version: 1, is_deleted: 0,
  }]);
}

/** Term rows; a row with an empty term and path is a day's property total, as the import writes it. */
async function searchRows(siteId: string, rows: Row[], version = 1) {
  await s.svc.running.ctx.store.insert('search_console', rows.map((r) => ({
    site_id: siteId, date: r.date, term: r.term, hostname: r.term ? 'shop.example' : '', path: r.path, clicks: r.clicks, impressions: r.impressions,
    position_sum: r.position * r.impressions, is_final: r.final === false ? 0 : 1, version,
  })));
}

beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z', domain: 'shop.example' });
  await connect(s.t.siteId);
  await searchRows(s.t.siteId, ROWS);
  // Rows without a connection (a disconnected site keeps its rows) answer as if there were none.
  unconnected = await s.svc.tenant({ scopes: ['analytics:read'] });
  await searchRows(unconnected.siteId, ROWS);
});
afterAll(() => s.stop());

const WEEK = { period: 'last7d' };
const getOther = (path: string, params: Record<string, string>) =>
  s.svc.api('GET', `/sites/${unconnected.siteId}${path}?${new URLSearchParams(params)}`, { token: unconnected.token });

describe('GET /search/totals', () => {
  test('sums, ctr as a fraction, impression-weighted position, partial while a day is not final', async () => {
    const body = await s.ok('/search/totals', WEEK);
    // clicks 19, impressions 565; position (120 + 60 + 80 + 200 + 30 + 3600 + 1000) / 565 = 5090 / 565.
    expect(body.data).toEqual({ clicks: 19, impressions: 565, ctr: 0.0336, position: 9.01, partial: true });
    expect(body.meta.range).toEqual({ from: '2026-05-14T00:00:00+00:00', to: '2026-05-21T00:00:00+00:00', tz: 'UTC', clamped: false });
  });

  test('a window of final days is not partial; the window covers the dates it spans in its tz', async () => {
    const body = await s.ok('/search/totals', { from: '2026-05-14T00:00:00+09:00', to: '2026-05-15T00:00:00+09:00', tz: 'Asia/Tokyo' });
    expect(body.data).toEqual({ clicks: 11, impressions: 110, ctr: 0.1, position: 2.36, partial: false });
  });

  test('period=all starts at the midnight of the first console date in the window\'s zone (not 00:00 UTC: 17:00 the day before in Los Angeles)', async () => {
    for (const [tz, from] of [['America/Los_Angeles', '2026-05-13T00:00:00-07:00'], ['Pacific/Kiritimati', '2026-05-13T00:00:00+14:00']]) {
      const body = await s.ok('/search/totals', { period: 'all', tz });
      expect(body.meta.range).toMatchObject({ from, clamped: false });
      expect(body.data).toMatchObject({ clicks: 29, impressions: 665 }); // every row, 05-13 included
    }
  });

  test('null with status 200 for a window without impressions, and for a site without a connection', async () => {
    expect((await s.ok('/search/totals', { from: '2026-05-15T00:00:00Z', to: '2026-05-17T00:00:00Z' })).data).toBeNull();
    const other = await getOther('/search/totals', WEEK);
    expect(other.status).toBe(200);
    expect(other.body.data).toBeNull();
  });

  test('a re-imported day replaces the earlier figures', async () => {
    const id = (await s.svc.tenant({ scopes: ['analytics:read'] }));
    await connect(id.siteId);
    await searchRows(id.siteId, [{ date: '2026-05-19', term: 'x', path: '/', clicks: 1, impressions: 10, position: 1, final: false }], 1);
    await searchRows(id.siteId, [{ date: '2026-05-19', term: 'x', path: '/', clicks: 5, impressions: 20, position: 2 }], 2);
    const res = await s.svc.api('GET', `/sites/${id.siteId}/search/totals?period=last7d`, { token: id.token });
    expect(res.body.data).toEqual({ clicks: 5, impressions: 20, ctr: 0.25, position: 2, partial: false });
  });
});

describe("a day's property total", () => {
  test('is the day in totals (anonymised queries included); a day imported without one sums its terms; terms never list it', async () => {
    const id = await s.svc.tenant({ scopes: ['analytics:read'] });
    await connect(id.siteId);
    await searchRows(id.siteId, [
      // 05-18: two terms (7 clicks, 70 impressions) and the property's total, higher: anonymised queries.
      { date: '2026-05-18', term: 'a', path: '/', clicks: 4, impressions: 40, position: 2 },
      { date: '2026-05-18', term: 'b', path: '/x', clicks: 3, impressions: 30, position: 4 },
      { date: '2026-05-18', term: '', path: '', clicks: 9, impressions: 100, position: 3.5 },
      // 05-19: imported before total rows were stored: its term rows are its total.
      { date: '2026-05-19', term: 'a', path: '/', clicks: 1, impressions: 50, position: 6 },
    ]);
    const get = (path: string, params: Record<string, string> = WEEK) => s.svc.api('GET', `/sites/${id.siteId}${path}?${new URLSearchParams(params)}`, { token: id.token });
    // position (350 + 300) / 150
    expect((await get('/search/totals')).body.data).toEqual({ clicks: 10, impressions: 150, ctr: 0.0667, position: 4.33, partial: false });
    expect((await get('/search/totals', { from: '2026-05-18T00:00:00Z', to: '2026-05-19T00:00:00Z' })).body.data)
      .toEqual({ clicks: 9, impressions: 100, ctr: 0.09, position: 3.5, partial: false });
    expect((await get('/search/terms')).body.data.map((r: { term: string }) => r.term)).toEqual(['a', 'b']);
    expect((await get('/search/term-pages', { ...WEEK, terms: 'a\nb' })).body.data.map((r: { path: string }) => r.path)).toEqual(['/', '/x']);
  });
});

describe('GET /search/terms', () => {
  test('most clicked first, each with up to 3 pages by clicks', async () => {
    const body = await s.ok('/search/terms', WEEK);
    expect(body.data).toEqual([
      {
        // position (120 + 60 + 200 + 30) / 155; /about and /blog tie on clicks: by hostname, then path, so /blog is the one cut.
        term: 'tally', clicks: 14, impressions: 155, ctr: 0.0903, position: 2.65,
        pages: [{ hostname: 'shop.example', path: '/pricing', clicks: 6 }, { hostname: 'shop.example', path: '/', clicks: 4 }, { hostname: 'shop.example', path: '/about', clicks: 2 }],
      },
      { term: 'web analytics', clicks: 4, impressions: 400, ctr: 0.01, position: 11.5, pages: [{ hostname: 'shop.example', path: '/', clicks: 4 }] },
      { term: 'tally, analytics', clicks: 1, impressions: 10, ctr: 0.1, position: 8, pages: [{ hostname: 'shop.example', path: '/docs', clicks: 1 }] },
    ]);
    expect(body.meta.page).toEqual({ limit: 100, offset: 0, has_more: false });
  });

  test('paged with a measured has_more; empty without a connection', async () => {
    const first = await s.ok('/search/terms', { ...WEEK, limit: '2' });
    expect(first.data.map((r: { term: string }) => r.term)).toEqual(['tally', 'web analytics']);
    expect(first.meta.page).toEqual({ limit: 2, offset: 0, has_more: true });
    const other = await getOther('/search/terms', WEEK);
    expect(other.body.data).toEqual([]);
  });
});

describe('GET /search/term-pages', () => {
  test('every pairing of the named terms, no cap of 3; terms split on newlines, not commas', async () => {
    const body = await s.ok('/search/term-pages', { ...WEEK, terms: 'tally\ntally, analytics' });
    expect(body.data).toEqual([
      { term: 'tally', hostname: 'shop.example', path: '/pricing', clicks: 6, impressions: 60 },
      { term: 'tally', hostname: 'shop.example', path: '/', clicks: 4, impressions: 40 },
      { term: 'tally', hostname: 'shop.example', path: '/blog', clicks: 2, impressions: 50 },
      { term: 'tally', hostname: 'shop.example', path: '/about', clicks: 2, impressions: 5 },
      { term: 'tally, analytics', hostname: 'shop.example', path: '/docs', clicks: 1, impressions: 10 },
    ]);
  });

  test('CRLF, blank lines, spaces around a term and repeats are tolerated', async () => {
    const body = await s.ok('/search/term-pages', { ...WEEK, terms: 'web analytics\r\n\r\n  web analytics \n' });
    expect(body.data).toEqual([{ term: 'web analytics', hostname: 'shop.example', path: '/', clicks: 4, impressions: 400 }]);
  });

  test.each([
    ['missing', {}, 'terms: required'],
    ['only blank lines', { terms: '\n\n' }, 'terms: required'],
    ['above the cap of 50', { terms: Array.from({ length: 51 }, (_, i) => `t${i}`).join('\n') }, 'terms: at most 50 terms per request, got 51'],
  ])('terms %s → 400', async (_n, params, message) => {
    const res = await s.get('/search/term-pages', { ...WEEK, ...params });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(message) });
  });

  test('50 terms are accepted', async () => {
    const res = await s.get('/search/term-pages', { ...WEEK, terms: ['tally', ...Array.from({ length: 49 }, (_, i) => `t${i}`)].join('\n') });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(4);
  });
});

test('window refusals apply as on every report', async () => {
  const res = await s.get('/search/totals', { period: 'last7d', from: '2026-05-01T00:00:00Z' });
  expect(res.status).toBe(400);
  expect(res.body.error.message).toContain('period');
  expect((await s.get('/search/terms', { bots: 'sometimes' })).status).toBe(400);
});
