import { FILTER_KEYS } from '../../query/registry/filters';
import { FIXTURE } from './reports-fixture';
import { reportSuite, type ReportSuite } from './reports-support';

/** Each of the 21 filter_<name> parameters on the hand-counted fixture plus one paid-search visit. */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z', domain: 'shop.example' });
  await s.importLines([
    ...FIXTURE,
    { ts: '2026-05-17T09:00:00Z', visitor: 'D', path: '/ads', query: 'gad_campaignid=98765', referrer: 'https://www.bing.com/', country: 'GB' },
  ]);
});
afterAll(() => s.stop());

/** [filter, value, extra params, expected visitors, expected views] */
const CASES: [string, string, Record<string, string>, number, number][] = [
  ['path', '/pricing', {}, 1, 1],
  ['path_pattern', '/docs/*', {}, 1, 2],
  ['path_pattern', '/**', {}, 4, 7],
  ['path_pattern', '/blog/*/x', {}, 0, 0],
  ['hostname', 'SHOP.example', {}, 4, 7],
  ['entry_path', '/docs/a', {}, 1, 2],
  ['exit_link', 'https://github.com/tally', {}, 1, 0],
  ['file_download', 'https://files.example/a.pdf', {}, 1, 0],
  ['goal', 'Signup', {}, 1, 0],
  ['browser', 'Firefox', {}, 1, 2],
  ['os', 'iOS', {}, 1, 2],
  ['device', 'Mobile', {}, 1, 2],
  ['country', 'us', {}, 1, 2],
  ['region', 'Bavaria', {}, 1, 2],
  ['city', 'San Francisco', {}, 1, 2],
  ['referrer', 'www.google.com', {}, 1, 2],
  ['referrer', '(direct)', {}, 2, 3],
  ['channel', 'Email', {}, 1, 1],
  ['utm_source', 'newsletter', {}, 1, 1],
  ['utm_medium', 'email', {}, 1, 1],
  ['utm_campaign', 'spring', {}, 1, 1],
  ['gad_campaign_id', '98765', {}, 1, 1],
  ['utm_term', 'tally', {}, 1, 1],
  ['bot_kind', 'ai_training', { bots: 'included' }, 1, 2],
  ['bot_kind', 'ai_training', {}, 0, 0],
];

test('every filter has a case', () => {
  expect(new Set(CASES.map((c) => c[0]))).toEqual(new Set(FILTER_KEYS));
});

test.each(CASES)('filter_%s=%s %j → %i visitors, %i views', async (filter, value, extra, visitors, views) => {
  const params = { [`filter_${filter}`]: value, ...extra };
  const aligned = await s.ok('/overview', { period: 'last7d', ...params });
  expect(aligned.data).toMatchObject({ visitors, views });
  // The same window 1 ms off the quarter hour reads raw events: the answers must agree.
  const raw = await s.ok('/overview', { from: '2026-05-14T00:00:00Z', to: '2026-05-20T23:59:59.999Z', ...params });
  expect(raw.data).toEqual(aligned.data);
  // The timeseries narrows the same way.
  const series = await s.ok('/timeseries', { period: 'last7d', ...params });
  expect(series.data.reduce((n: number, r: { views: number }) => n + r.views, 0)).toBe(views);
});

test('filters combine with AND', async () => {
  expect((await s.ok('/overview', { period: 'last7d', filter_country: 'DE', filter_path: '/' })).data).toMatchObject({ visitors: 1, views: 1 });
  expect((await s.ok('/overview', { period: 'last7d', filter_country: 'DE', filter_path: '/docs/a' })).data).toMatchObject({ visitors: 0, views: 0 });
});

test('a path filter without its leading / is given one, as settings, goals and funnel steps are', async () => {
  for (const [slashless, slashed] of [
    [{ filter_path: 'docs/a' }, { filter_path: '/docs/a' }],
    [{ filter_path_pattern: 'docs/**' }, { filter_path_pattern: '/docs/**' }],
    [{ filter_entry_path: 'docs/a' }, { filter_entry_path: '/docs/a' }],
  ]) {
    const expected = (await s.ok('/overview', { period: 'last7d', ...slashed })).data;
    expect(expected.visitors).toBeGreaterThan(0);
    expect((await s.ok('/overview', { period: 'last7d', ...slashless })).data).toEqual(expected);
  }
});

test.each([
  [{ filter_pages: '/' }, /^filter_pages: unknown filter/],
  [{ filter_path: '' }, /^filter_path: must not be empty/],
  [{ filter_path: 'x'.repeat(2001) }, /^filter_path: must be at most 2000/],
])('bad filter %j is a 400 naming it', async (params, message) => {
  const res = await s.get('/overview', params as Record<string, string>);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) });
});

test('heatmap narrows by channel only; engagement accepts and ignores filters', async () => {
  const heat = await s.ok('/heatmap', { period: 'last7d', channel: 'Email', filter_path: '/nothing' });
  expect(heat.data).toEqual([{ day: 2, hour: 15, views: 1, visitors: 1 }]);
  const a = await s.ok('/engagement', { period: 'last7d', filter_path: '/nothing' });
  const b = await s.ok('/engagement', { period: 'last7d' });
  expect(a.data).toEqual(b.data);
  expect(b.data.reduce((n: number, r: { sessions: number }) => n + r.sessions, 0)).toBe(5);
});

test('the heatmap\'s channel is read as filter_channel is: any case, a value outside the channels refused', async () => {
  expect((await s.ok('/heatmap', { period: 'last7d', channel: 'email' })).data).toEqual([{ day: 2, hour: 15, views: 1, visitors: 1 }]);
  const typo = await s.get('/heatmap', { period: 'last7d', channel: 'Emial' });
  expect(typo.status).toBe(400);
  expect(typo.body.error.message).toMatch(/^channel: "Emial" is not a channel; valid values are Direct, /);
});

test.each(['/heatmap', '/engagement', '/realtime'])('%s accepts any filter_<name>, even one /overview refuses', async (report) => {
  const odd = { filter_path: '', filter_pages: '/', filter_country: 'x'.repeat(2001) };
  expect((await s.get('/overview', { period: 'last7d', ...odd })).status).toBe(400);
  const window: Record<string, string> = report === '/realtime' ? {} : { period: 'last7d' };
  const withOdd = await s.ok(report, { ...window, ...odd });
  expect(withOdd.data).toEqual((await s.ok(report, window)).data);
});
