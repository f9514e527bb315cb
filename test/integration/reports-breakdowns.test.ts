import { DIMENSION_KEYS, DIMENSIONS } from '../../query/registry/dimensions';
import { FIXTURE } from './reports-fixture';
import { reportSuite, type ReportSuite } from './reports-support';

/** Every dimension on the hand-counted fixture (last7d, humans), paging and ranking rules. */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z', domain: 'shop.example' });
  await s.importLines(FIXTURE);
  await s.payment({ id: 'pay_1', visitor: 'A', paid_at: '2026-05-18T10:05:00Z', amount: 4900, refunded: 900 });
});
afterAll(() => s.stop());

const rows = async (dimension: string, params: Record<string, string> = {}) =>
  (await s.ok(`/breakdowns/${dimension}`, { period: 'last7d', ...params })).data;

const session = (label: string, visitors: number, views: number, goals = 0, revenue_cents = 0) => ({ label, visitors, views, goals, revenue_cents });

const EXPECTED: Record<string, object[]> = {
  path: [
    { label: '/', visitors: 2, views: 2 },
    { label: '/blog/hello', visitors: 1, views: 1 },
    { label: '/docs/a', visitors: 1, views: 1 },
    { label: '/docs/b', visitors: 1, views: 1 },
    { label: '/pricing', visitors: 1, views: 1 },
  ],
  hostname: [{ label: 'shop.example', visitors: 3, views: 6 }],
  entry_path: [session('/', 2, 3, 1, 4000), session('/blog/hello', 1, 1), session('/docs/a', 1, 2)],
  exit_link: [{ label: 'https://github.com/tally', visitors: 1, clicks: 1 }],
  file_download: [{ label: 'https://files.example/a.pdf', visitors: 1, clicks: 1 }],
  referrer: [session('(direct)', 2, 3), session('google.com', 1, 2, 1, 4000), session('news.ycombinator.com', 1, 1)],
  channel: [session('Direct', 1, 2), session('Email', 1, 1), session('Organic Search', 1, 2, 1, 4000), session('Organic Social', 1, 1)],
  utm_campaign: [session('spring', 1, 1)],
  utm_term: [session('tally', 1, 1)],
  country: [session('DE', 1, 2), session('FR', 1, 2, 1, 4000), session('US', 1, 2)],
  region: [{ ...session('Bavaria', 1, 2), country_code: 'DE' }, { ...session('California', 1, 2), country_code: 'US' }],
  city: [{ ...session('Munich', 1, 2), country_code: 'DE' }, { ...session('San Francisco', 1, 2), country_code: 'US' }],
  browser: [session('Chrome', 1, 2, 1, 4000), session('Firefox', 1, 2), session('Safari', 1, 2)],
  os: [session('Windows', 1, 2), session('iOS', 1, 2), session('macOS', 1, 2, 1, 4000)],
  device: [session('Desktop', 2, 4, 1, 4000), session('Mobile', 1, 2)],
  goal: [{ label: 'Signup', visitors: 1, goals: 1 }],
};

test.each(DIMENSION_KEYS.map((d) => [d]))('%s: rows, fields and ranking', async (dimension) => {
  const body = await s.ok(`/breakdowns/${dimension}`, { period: 'last7d' });
  expect(body.data).toEqual(EXPECTED[dimension]);
  expect(body.meta).toEqual({
    site_id: s.t.siteId,
    page: { limit: 100, offset: 0, has_more: false },
    range: { from: '2026-05-14T00:00:00+00:00', to: '2026-05-21T00:00:00+00:00', tz: 'UTC', clamped: false },
  });
  // Fields a dimension does not carry are absent, never null.
  for (const row of body.data) expect(Object.keys(row).sort()).toEqual(['label', ...Object.keys(DIMENSIONS[dimension].extra), ...DIMENSIONS[dimension].fields].sort());
});

test.each(DIMENSION_KEYS.filter((d) => DIMENSIONS[d].family === 'session').map((d) => [d]))(
  '%s: the rollup (aligned window) and raw events (1 ms off) agree', async (dimension) => {
    const raw = await s.ok(`/breakdowns/${dimension}`, { from: '2026-05-14T00:00:00Z', to: '2026-05-20T23:59:59.999Z' });
    expect(raw.data).toEqual(EXPECTED[dimension]);
  },
);

test('bots=included adds crawler rows; crawler-kind filter finds them', async () => {
  expect(await rows('path', { bots: 'included' })).toEqual([
    { label: '/', visitors: 3, views: 3 },
    { label: '/pricing', visitors: 2, views: 2 },
    { label: '/blog/hello', visitors: 1, views: 1 },
    { label: '/docs/a', visitors: 1, views: 1 },
    { label: '/docs/b', visitors: 1, views: 1 },
  ]);
  expect(await rows('device', { bots: 'included', filter_bot_kind: 'ai_training' })).toEqual([session('Bot', 1, 2)]);
});

test('filters narrow the rows before ranking', async () => {
  expect(await rows('path', { filter_country: 'DE' })).toEqual([
    { label: '/', visitors: 1, views: 1 },
    { label: '/blog/hello', visitors: 1, views: 1 },
  ]);
  expect(await rows('country', { filter_path: '/pricing' })).toEqual([session('FR', 1, 1, 1, 4000)]);
});

describe('paging: has_more is measured at the exact boundary', () => {
  const page = async (limit: number, offset: number) => {
    const body = await s.ok('/breakdowns/path', { period: 'last7d', limit: String(limit), offset: String(offset) });
    return { labels: body.data.map((r: { label: string }) => r.label), page: body.meta.page };
  };
  test.each([
    [5, 0, ['/', '/blog/hello', '/docs/a', '/docs/b', '/pricing'], false],
    [4, 0, ['/', '/blog/hello', '/docs/a', '/docs/b'], true],
    [2, 2, ['/docs/a', '/docs/b'], true],
    [1, 4, ['/pricing'], false],
    [2, 4, ['/pricing'], false],
    [10, 5, [], false],
  ])('limit %i offset %i', async (limit, offset, labels, hasMore) => {
    expect(await page(limit, offset)).toEqual({ labels, page: { limit, offset, has_more: hasMore } });
  });

  test.each([['0'], ['1001'], ['-1'], ['1.5'], ['abc']])('limit=%s is refused', async (limit) => {
    const res = await s.get('/breakdowns/path', { limit });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^limit:/);
  });
});

test('an unknown dimension is 400 unknown_dimension listing the valid ones', async () => {
  const res = await s.get('/breakdowns/pages', { period: 'last7d' });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('unknown_dimension');
  expect(res.body.error.details.valid).toEqual([...DIMENSION_KEYS]);
});
