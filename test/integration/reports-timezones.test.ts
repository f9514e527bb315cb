import { setClock } from '../../core/clock';
import { reportSuite, type ReportSuite } from './reports-support';

/** Windows and buckets in tz: DST days, half-hour offsets, Monday weeks, UTC engagement buckets. */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-10-25T12:00:00Z' });
  await s.importLines([
    // Paris, Sunday 2026-10-25: 03:00 CEST falls back to 02:00 CET at 01:00 UTC (a 25-hour day).
    { ts: '2026-10-24T21:59:00Z', visitor: 'p0', path: '/' }, // 23:59 on the 24th, local
    { ts: '2026-10-24T22:30:00Z', visitor: 'p1', path: '/' }, // 00:30 local
    { ts: '2026-10-25T00:30:00Z', visitor: 'p2', path: '/' }, // 02:30 CEST (first 02:30)
    { ts: '2026-10-25T01:30:00Z', visitor: 'p3', path: '/' }, // 02:30 CET (second 02:30)
    { ts: '2026-10-25T22:59:00Z', visitor: 'p4', path: '/' }, // 23:59 CET
    { ts: '2026-10-25T23:00:00Z', visitor: 'p5', path: '/' }, // 00:00 on the 26th, local
    // New York, Sunday 2026-11-01: 02:00 EDT falls back to 01:00 EST at 06:00 UTC.
    { ts: '2026-11-01T03:59:00Z', visitor: 'n0', path: '/' }, // 23:59 on Oct 31, local
    { ts: '2026-11-01T05:30:00Z', visitor: 'n1', path: '/' }, // 01:30 EDT
    { ts: '2026-11-01T06:30:00Z', visitor: 'n2', path: '/' }, // 01:30 EST
    { ts: '2026-11-02T04:59:00Z', visitor: 'n3', path: '/' }, // 23:59 EST
    // Kolkata (+05:30): local midnight of 2026-05-11 is 2026-05-10 18:30 UTC.
    { ts: '2026-05-10T18:29:00Z', visitor: 'k0', path: '/' },
    { ts: '2026-05-10T18:30:00Z', visitor: 'k1', path: '/' },
    { ts: '2026-05-11T05:45:00Z', visitor: 'k2', path: '/' }, // 11:15 IST
    // Lord Howe shifts by 30 minutes: 2026-10-04 02:00 (+10:30) springs to 02:30 (+11) at 15:30 UTC;
    // 2026-04-05 02:00 (+11) falls back to 01:30 (+10:30) at 15:00 UTC.
    { ts: '2026-10-03T15:10:00Z', visitor: 'l0', path: '/' }, // 01:40 +10:30
    { ts: '2026-10-03T16:10:00Z', visitor: 'l1', path: '/' }, // 03:10 +11
    { ts: '2026-10-04T12:00:00Z', visitor: 'l2', path: '/' }, // 23:00 +11
    { ts: '2026-04-04T14:40:00Z', visitor: 'l3', path: '/' }, // 01:40 +11
    { ts: '2026-04-04T15:10:00Z', visitor: 'l4', path: '/' }, // 01:40 +10:30 (the second 01:40)
    { ts: '2026-04-04T15:40:00Z', visitor: 'l5', path: '/' }, // 02:10 +10:30
  ]);
});
afterAll(() => s.stop());

const views = (rows: { bucket: string; views: number }[]) => Object.fromEntries(rows.filter((r) => r.views).map((r) => [r.bucket, r.views]));

describe('Europe/Paris, 2026-10-25 (25 hours)', () => {
  beforeEach(() => setClock('2026-10-25T12:00:00Z'));

  test('today is [00:00+02:00, 00:00+01:00) and holds exactly that day', async () => {
    const body = await s.ok('/overview', { period: 'today', tz: 'Europe/Paris' });
    expect(body.meta.range).toEqual({ from: '2026-10-25T00:00:00+02:00', to: '2026-10-26T00:00:00+01:00', tz: 'Europe/Paris', clamped: false });
    expect(body.data).toMatchObject({ visitors: 4, views: 4 });
  });

  test('hourly: one 02:00 bucket holding both 02:30s, 24 zero-filled rows', async () => {
    const body = await s.ok('/timeseries', { period: 'today', tz: 'Europe/Paris' });
    expect(body.data).toHaveLength(24);
    expect(body.data[0].bucket).toBe('2026-10-25 00:00:00');
    expect(views(body.data)).toEqual({ '2026-10-25 00:00:00': 1, '2026-10-25 02:00:00': 2, '2026-10-25 23:00:00': 1 });
    expect(body.data.find((r: { bucket: string }) => r.bucket === '2026-10-25 05:00:00')).toEqual({
      bucket: '2026-10-25 05:00:00', visitors: 0, views: 0, new_visitors: 0, returning_visitors: 0, crawler_views: 0, goals: 0, goal_value_cents: 0,
    });
  });

  test('daily buckets over the DST weekend follow local midnights', async () => {
    const body = await s.ok('/timeseries', { from: '2026-10-24T00:00:00+02:00', to: '2026-10-27T00:00:00+01:00', tz: 'Europe/Paris', unit: 'day' });
    expect(views(body.data)).toEqual({ '2026-10-24 00:00:00': 1, '2026-10-25 00:00:00': 4, '2026-10-26 00:00:00': 1 });
  });

  test('the same day read in UTC cuts elsewhere', async () => {
    const body = await s.ok('/timeseries', { from: '2026-10-24T00:00:00Z', to: '2026-10-27T00:00:00Z', unit: 'day' });
    expect(views(body.data)).toEqual({ '2026-10-24 00:00:00': 2, '2026-10-25 00:00:00': 4 });
  });
});

describe('America/New_York, 2026-11-01 (25 hours)', () => {
  beforeEach(() => setClock('2026-11-01T17:00:00Z'));

  test('today starts at 00:00-04:00 and ends at 00:00-05:00; 01:00 holds both 01:30s', async () => {
    const body = await s.ok('/timeseries', { period: 'today', tz: 'America/New_York' });
    expect(body.meta.range).toMatchObject({ from: '2026-11-01T00:00:00-04:00', to: '2026-11-02T00:00:00-05:00' });
    expect(body.data).toHaveLength(24);
    expect(views(body.data)).toEqual({ '2026-11-01 01:00:00': 2, '2026-11-01 23:00:00': 1 });
  });

  test('yesterday (Oct 31) holds the 23:59 event', async () => {
    const body = await s.ok('/overview', { period: 'yesterday', tz: 'America/New_York' });
    expect(body.data.views).toBe(1);
  });
});

describe('Australia/Lord_Howe (a 30-minute DST shift)', () => {
  const tz = 'Australia/Lord_Howe';
  const hourly = async (from: string, to: string) => {
    const [series, overview] = await Promise.all([s.ok('/timeseries', { from, to, tz, unit: 'hour' }), s.ok('/overview', { from, to, tz })]);
    expect(series.data.reduce((sum: number, r: { views: number }) => sum + r.views, 0)).toBe(overview.data.views);
    return views(series.data);
  };

  test('spring forward: every event is in its local hour, and the hours add up to the day', async () => {
    expect(await hourly('2026-10-04T00:00:00+10:30', '2026-10-05T00:00:00+11:00')).toEqual({
      '2026-10-04 01:00:00': 1, '2026-10-04 03:00:00': 1, '2026-10-04 23:00:00': 1,
    });
  });

  test('fall back: both 01:40s in 01:00, 02:10 in 02:00', async () => {
    expect(await hourly('2026-04-05T00:00:00+11:00', '2026-04-06T00:00:00+10:30')).toEqual({ '2026-04-05 01:00:00': 2, '2026-04-05 02:00:00': 1 });
  });
});

describe('Asia/Kolkata (+05:30)', () => {
  beforeEach(() => setClock('2026-05-11T06:00:00Z'));

  test('today starts at 18:30 UTC the day before', async () => {
    const body = await s.ok('/overview', { period: 'today', tz: 'Asia/Kolkata' });
    expect(body.meta.range).toMatchObject({ from: '2026-05-11T00:00:00+05:30', to: '2026-05-12T00:00:00+05:30' });
    expect(body.data.views).toBe(2);
  });

  test('hour labels are local hours', async () => {
    const body = await s.ok('/timeseries', { period: 'today', tz: 'Asia/Kolkata' });
    expect(views(body.data)).toEqual({ '2026-05-11 00:00:00': 1, '2026-05-11 11:00:00': 1 });
  });

  test('heatmap cells are local weekday and hour; sparse', async () => {
    const body = await s.ok('/heatmap', { from: '2026-05-10T00:00:00+05:30', to: '2026-05-12T00:00:00+05:30', tz: 'Asia/Kolkata' });
    // 2026-05-10 is a Sunday (7), the 11th a Monday (1).
    expect(body.data).toEqual([
      { day: 1, hour: 0, views: 1, visitors: 1 },
      { day: 1, hour: 11, views: 1, visitors: 1 },
      { day: 7, hour: 23, views: 1, visitors: 1 },
    ]);
  });

  test('rollup (aligned) and raw events (1 ms off) give the same timeseries', async () => {
    const a = await s.ok('/timeseries', { from: '2026-05-10T00:00:00+05:30', to: '2026-05-12T00:00:00+05:30', tz: 'Asia/Kolkata' });
    const b = await s.ok('/timeseries', { from: '2026-05-10T00:00:00+05:30', to: '2026-05-11T23:59:59.999+05:30', tz: 'Asia/Kolkata' });
    expect(b.data).toEqual(a.data);
  });
});

test('weeks start on Monday, a partial first week keeps its Monday label', async () => {
  setClock('2026-11-10T12:00:00Z');
  // From Wednesday 2026-10-21 (UTC): the first bucket is Monday 2026-10-19.
  const body = await s.ok('/timeseries', { from: '2026-10-21T00:00:00Z', to: '2026-11-09T00:00:00Z', unit: 'week' });
  expect(body.data.map((r: { bucket: string }) => r.bucket)).toEqual(['2026-10-19 00:00:00', '2026-10-26 00:00:00', '2026-11-02 00:00:00']);
  expect(views(body.data)).toEqual({ '2026-10-19 00:00:00': 6, '2026-10-26 00:00:00': 3, '2026-11-02 00:00:00': 1 });
});

test('default units by window length', async () => {
  setClock('2026-11-10T12:00:00Z');
  const rows = async (p: Record<string, string>) => (await s.ok('/timeseries', p)).data.map((r: { bucket: string }) => r.bucket);
  expect(await rows({ period: 'today' })).toHaveLength(24);
  expect(await rows({ from: '2026-11-01T00:00:00Z', to: '2026-11-03T00:00:00Z' })).toHaveLength(48); // 48 hours: still hourly
  expect(await rows({ period: 'last7d' })).toHaveLength(7);
  const year = await rows({ period: 'last12m' }); // weekly: 2025-12-01 is a Monday
  expect(year[0]).toBe('2025-12-01 00:00:00');
  expect(year[1]).toBe('2025-12-08 00:00:00');
  expect((await rows({ from: '2026-05-06T00:00:00Z', to: '2026-06-10T00:00:00Z' }))[0]).toBe('2026-05-06 00:00:00'); // daily
  expect(await rows({ from: '2024-01-01T00:00:00Z', to: '2026-11-01T00:00:00Z' })).toHaveLength(34); // monthly
});

test('more than 10,000 buckets is refused; exactly the limit is served', async () => {
  setClock('2026-11-10T12:00:00Z');
  const refused = await s.get('/timeseries', { period: 'last30d', unit: 'minute' });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^unit:/) });
  const max = await s.ok('/timeseries', { from: '2026-05-01T00:00:00Z', to: '2026-05-07T22:40:00Z', unit: 'minute' });
  expect(max.data).toHaveLength(10_000);
});

test('engagement buckets are UTC even when tz sets the window', async () => {
  setClock('2026-11-10T12:00:00Z');
  const body = await s.ok('/engagement', { from: '2026-05-11T00:00:00+05:30', to: '2026-05-12T00:00:00+05:30', tz: 'Asia/Kolkata', unit: 'day' });
  expect(body.data).toEqual([
    { bucket: '2026-05-10 00:00:00', sessions: 1, bounce_rate: 100, median_session_seconds: 0 },
    { bucket: '2026-05-11 00:00:00', sessions: 1, bounce_rate: 100, median_session_seconds: 0 },
  ]);
});
