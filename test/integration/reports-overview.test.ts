import { FIXTURE } from './reports-fixture';
import { reportSuite, type ReportSuite } from './reports-support';

/** Overview semantics (PRODUCT.md §4) on the hand-counted fixture of reports-fixture.ts. */

let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z' });
  await s.importLines(FIXTURE);
  await s.payment({ id: 'pay_1', visitor: 'A', paid_at: '2026-05-18T10:05:00Z', amount: 4900, refunded: 900 });
  await s.payment({ id: 'pay_failed', visitor: 'A', paid_at: '2026-05-18T10:06:00Z', amount: 9900, status: 'failed' });
  await s.payment({ id: 'pay_gbp', visitor: 'A', paid_at: '2026-05-18T10:07:00Z', amount: 9900, currency: 'GBP' });
  await s.payment({ id: 'pay_old', visitor: 'A', paid_at: '2026-05-01T10:00:00Z', amount: 100 });
});
afterAll(() => s.stop());

const HUMANS = {
  visitors: 3, sessions: 4, views: 6, goals: 1, payments: 1, new_visitors: 2, returning_visitors: 1, bounce_rate: 25,
  conversion_rate: 33.33, avg_session_seconds: 390, revenue_cents: 4000, goal_value_cents: 1500, revenue_per_visitor_cents: 1333,
};

test('every overview figure, humans only (default)', async () => {
  const body = await s.ok('/overview', { period: 'last7d' });
  expect(body.data).toEqual(HUMANS);
  expect(body.meta).toEqual({
    site_id: s.t.siteId,
    range: { from: '2026-05-14T00:00:00+00:00', to: '2026-05-21T00:00:00+00:00', tz: 'UTC', clamped: false },
  });
});

test('the same window given as from/to 1 ms off the quarter hour (raw events) agrees with the rollup', async () => {
  const body = await s.ok('/overview', { from: '2026-05-14T00:00:00.000Z', to: '2026-05-20T23:59:59.999Z' });
  expect(body.data).toEqual(HUMANS);
});

test('bots=included adds crawler events to every figure', async () => {
  const body = await s.ok('/overview', { period: 'last7d', bots: 'included' });
  expect(body.data).toEqual({
    ...HUMANS, visitors: 4, sessions: 5, views: 8, new_visitors: 3, bounce_rate: 20, conversion_rate: 25, avg_session_seconds: 360,
    revenue_per_visitor_cents: 1000,
  });
});

test('a filter narrows events; bounce and duration still look at whole sessions', async () => {
  // Only /pricing events: A's session (pageview + Signup on /pricing).
  const body = await s.ok('/overview', { period: 'last7d', filter_path: '/pricing' });
  expect(body.data).toMatchObject({ visitors: 1, sessions: 1, views: 1, goals: 1, bounce_rate: 0, avg_session_seconds: 180, new_visitors: 0, returning_visitors: 1 });
});

test('a goal filter narrows to completions; the conversion denominator ignores it', async () => {
  const body = await s.ok('/overview', { period: 'last7d', filter_goal: 'Signup' });
  expect(body.data).toMatchObject({ visitors: 1, sessions: 1, views: 0, goals: 1, goal_value_cents: 1500, conversion_rate: 33.33 });
});

test('revenue with a session filter follows the payment to its attributed session', async () => {
  expect((await s.ok('/overview', { period: 'last7d', filter_country: 'FR' })).data).toMatchObject({ payments: 1, revenue_cents: 4000, visitors: 1 });
  expect((await s.ok('/overview', { period: 'last7d', filter_country: 'DE' })).data).toMatchObject({ payments: 0, revenue_cents: 0, visitors: 1 });
});

test('closed-set filters (channel, device, bot_kind) match in any case and refuse a value outside the set', async () => {
  for (const [name, canonical, typed] of [['channel', 'Organic Search', 'organic SEARCH'], ['device', 'Desktop', 'desktop'], ['bot_kind', 'search_engine', 'Search_Engine']]) {
    const params = { period: 'last7d', bots: 'included' };
    const a = (await s.ok('/overview', { ...params, [`filter_${name}`]: canonical })).data;
    expect((await s.ok('/overview', { ...params, [`filter_${name}`]: typed })).data).toEqual(a);
  }
  expect((await s.ok('/overview', { period: 'last7d', filter_device: 'desktop' })).data.visitors).toBeGreaterThan(0);
  const typo = await s.get('/overview', { period: 'last7d', filter_channel: 'Organic Serach' });
  expect(typo.status).toBe(400);
  expect(typo.body.error.message).toMatch(/^filter_channel: "Organic Serach" is not a channel; valid values are Direct, .*Organic Search.*Unassigned, \(not set\)$/);
  expect((await s.get('/overview', { period: 'last7d', filter_bot_kind: 'crawler' })).body.error.message).toMatch(/^filter_bot_kind: "crawler" is not a bot kind; valid values are ai_training/);
  expect((await s.get('/overview', { period: 'last7d', filter_channel: '(not set)' })).status).toBe(200);
});

test('a window before all events is all zeros, never an error', async () => {
  const body = await s.ok('/overview', { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' });
  expect(Object.values(body.data).every((v) => v === 0)).toBe(true);
});

test('realtime counts humans in the last minutes; countries need geo', async () => {
  // now = 12:00; C's last event 11:10 is 50 minutes ago.
  expect((await s.ok('/realtime')).data).toEqual({ visitors: 0, views: 0 });
  expect((await s.ok('/realtime', { minutes: '60' })).data).toEqual({ visitors: 1, views: 2 });
  const countries = await s.ok('/realtime/countries', { minutes: '360' });
  expect(countries.data).toEqual([{ country_code: 'US', visitors: 1, views: 2 }]);
  expect(countries.meta).toEqual({ site_id: s.t.siteId, minutes: 360, page: { limit: 100, offset: 0, has_more: false } });
  expect((await s.get('/realtime/countries', { minutes: '361' })).status).toBe(400);
  expect((await s.get('/realtime', { minutes: '361' })).body.error.message).toMatch(/^minutes:/);
  // Both agree with the same minutes.
  const online = (await s.ok('/realtime', { minutes: '360' })).data.visitors;
  expect(countries.data.reduce((n: number, r: { visitors: number }) => n + r.visitors, 0)).toBe(online);
});
