import { CHROME, GPTBOT, reportSuite, type ReportSuite } from './reports-support';

/**
 * Empty attributes and unattributed payments, on a hand-counted fixture (2026-05-19 UTC):
 *  V1 (Chrome on macOS, from google.com): / at 10:00:00 and /pricing at 10:00:05 (a 5 s session); pays 1000 at 10:30.
 *  V2 (a browser whose OS and device are unknown, direct): / at 11:00:00 and /docs at 11:00:20 (20 s).
 *  Two payments nobody's session explains: one from a visitor never seen (250), one without a visitor id (300).
 */
const UNKNOWN_OS = 'Mozilla/5.0 (X11; Unknown)';

let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z' });
  await s.importLines([
    { ts: '2026-05-19T10:00:00Z', visitor: 'V1', path: '/', referrer: 'https://www.google.com/', user_agent: CHROME },
    { ts: '2026-05-19T10:00:05Z', visitor: 'V1', path: '/pricing', user_agent: CHROME },
    { ts: '2026-05-19T11:00:00Z', visitor: 'V2', path: '/', user_agent: UNKNOWN_OS },
    { ts: '2026-05-19T11:00:20Z', visitor: 'V2', path: '/docs', user_agent: UNKNOWN_OS },
  ]);
  // The day before: 32 sessions, one of them a bounce (1/32 = 3.125 %).
  await s.importLines(Array.from({ length: 32 }, (_, i) => [
    { ts: `2026-05-18T${String(i % 24).padStart(2, '0')}:00:00Z`, visitor: `R${i}`, path: '/' },
    ...(i === 0 ? [] : [{ ts: `2026-05-18T${String(i % 24).padStart(2, '0')}:00:10Z`, visitor: `R${i}`, path: '/next' }]),
  ]).flat());
  await s.payment({ id: 'pay_v1', visitor: 'V1', paid_at: '2026-05-19T10:30:00Z', amount: 1000 });
  await s.payment({ id: 'pay_stranger', visitor: 'never-seen', paid_at: '2026-05-19T12:00:00Z', amount: 250 });
  await s.payment({ id: 'pay_anonymous', visitor: null, paid_at: '2026-05-19T12:30:00Z', amount: 300 });
});
afterAll(() => s.stop());

const DAY = { from: '2026-05-19T00:00:00Z', to: '2026-05-20T00:00:00Z' };
const row = (label: string, visitors: number, revenue_cents: number) => ({ label, visitors, views: 2, goals: 0, revenue_cents });

test('unattributed payments count in the totals only, never in a (direct) or (not set) row', async () => {
  const overview = (await s.ok('/overview', DAY)).data;
  expect(overview).toMatchObject({ visitors: 2, payments: 3, revenue_cents: 1550 });
  expect((await s.ok('/breakdowns/os', DAY)).data).toEqual([row('(not set)', 1, 0), row('macOS', 1, 1000)]);
  expect((await s.ok('/breakdowns/device', DAY)).data).toEqual([row('(not set)', 1, 0), row('Desktop', 1, 1000)]);
  expect((await s.ok('/breakdowns/referrer', DAY)).data).toEqual([row('(direct)', 1, 0), row('google.com', 1, 1000)]);
  expect((await s.ok('/breakdowns/channel', DAY)).data).toEqual([row('Direct', 1, 0), row('Organic Search', 1, 1000)]);
  expect((await s.ok('/breakdowns/entry_path', DAY)).data).toEqual([{ ...row('/', 2, 1000), views: 4 }]);
});

test('a (not set) row can be drilled into: its filter selects the sessions the row counts', async () => {
  const notSet = (await s.ok('/overview', { ...DAY, filter_os: '(not set)' })).data;
  expect(notSet).toMatchObject({ visitors: 1, views: 2, payments: 0, revenue_cents: 0 });
  expect((await s.ok('/overview', { ...DAY, filter_device: '(not set)' })).data).toMatchObject({ visitors: 1, views: 2 });
  // In any case, as the closed sets' own values are.
  expect((await s.ok('/overview', { ...DAY, filter_device: '(NOT SET)' })).data).toMatchObject({ visitors: 1, views: 2 });
  expect((await s.ok('/overview', { ...DAY, filter_os: '(Not Set)' })).data).toMatchObject({ visitors: 1, views: 2 });
  expect((await s.ok('/breakdowns/path', { ...DAY, filter_os: '(not set)' })).data).toEqual([
    { label: '/', visitors: 1, views: 1 }, { label: '/docs', visitors: 1, views: 1 },
  ]);
  // A named value still selects only itself.
  expect((await s.ok('/overview', { ...DAY, filter_os: 'macOS' })).data).toMatchObject({ visitors: 1, payments: 1, revenue_cents: 1000 });
});

test('the mean session length rounds halves up, like every other rounded figure', async () => {
  // (5 + 20) / 2 = 12.5 s; ClickHouse's round() would give 12 (halves to even).
  expect((await s.ok('/overview', DAY)).data.avg_session_seconds).toBe(13);
  expect((await s.ok('/engagement', { ...DAY, unit: 'day' })).data[0].median_session_seconds).toBe(12.5);
});

test('a visitor first seen as a crawler hit is new in the bucket of their first human event, as the overview counts them', async () => {
  await s.importLines([
    { ts: '2026-05-15T06:00:00Z', visitor: 'C1', path: '/', user_agent: GPTBOT },
    { ts: '2026-05-16T09:00:00Z', visitor: 'C1', path: '/', user_agent: CHROME },
  ]);
  const two = { from: '2026-05-15T00:00:00Z', to: '2026-05-17T00:00:00Z', unit: 'day' };
  const series = (await s.ok('/timeseries', two)).data.map((r: Record<string, unknown>) => [r.visitors, r.new_visitors, r.returning_visitors]);
  expect(series).toEqual([[0, 0, 0], [1, 1, 0]]);
  expect((await s.ok('/overview', two)).data).toMatchObject({ visitors: 1, new_visitors: 1, returning_visitors: 0 });
  // With crawlers counted, the crawler hit is the visitor's first event.
  const all = (await s.ok('/timeseries', { ...two, bots: 'included' })).data.map((r: Record<string, unknown>) => [r.visitors, r.new_visitors]);
  expect(all).toEqual([[1, 1], [1, 0]]);
});

test('the median session length rounds its half millisecond up, with no float error on the way', async () => {
  // 199.759 s and 630.062 s: the median is 414,910.5 ms, so 414.911 s (seconds as floats gave 414.91).
  await s.importLines([
    { ts: '2026-05-17T10:00:00.000Z', visitor: 'M1', path: '/' }, { ts: '2026-05-17T10:03:19.759Z', visitor: 'M1', path: '/b' },
    { ts: '2026-05-17T11:00:00.000Z', visitor: 'M2', path: '/' }, { ts: '2026-05-17T11:10:30.062Z', visitor: 'M2', path: '/b' },
  ]);
  const day = { from: '2026-05-17T00:00:00Z', to: '2026-05-18T00:00:00Z' };
  expect((await s.ok('/engagement', { ...day, unit: 'day' })).data[0].median_session_seconds).toBe(414.911);
  expect((await s.ok('/channel-quality', day)).data[0].median_session_seconds).toBe(414.911);
});

test('the bounce rate rounds halves up too, as the conversion rate does (1 bounce in 32 sessions is 3.13)', async () => {
  const before = { from: '2026-05-18T00:00:00Z', to: '2026-05-19T00:00:00Z' };
  expect((await s.ok('/overview', before)).data).toMatchObject({ sessions: 32, bounce_rate: 3.13 });
  expect((await s.ok('/engagement', { ...before, unit: 'day' })).data[0]).toMatchObject({ sessions: 32, bounce_rate: 3.13 });
});
