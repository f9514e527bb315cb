import { setClock } from '../../core/clock';
import { reportSuite, type ReportSuite } from './reports-support';

/** Window rules: retention clamping, period=all, the default window, and every refusal. */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z', retentionDays: 30 });
  await s.importLines([
    { ts: '2026-03-01T10:00:00Z', visitor: 'old', path: '/' }, // older than 30 days
    { ts: '2026-04-25T10:00:00Z', visitor: 'a', path: '/' }, // inside 30 days, outside last7d
    { ts: '2026-05-19T10:00:00Z', visitor: 'b', path: '/' },
  ]);
});
afterAll(() => s.stop());
beforeEach(() => setClock('2026-05-20T12:00:00Z'));

test('a window reaching before retention covers the retained part, flagged clamped', async () => {
  const body = await s.ok('/overview', { period: 'last12m' });
  expect(body.meta.range).toEqual({ from: '2026-04-20T12:00:00+00:00', to: '2026-06-01T00:00:00+00:00', tz: 'UTC', clamped: true });
  expect(body.data).toMatchObject({ visitors: 2, views: 2 });
  const series = await s.ok('/timeseries', { period: 'last12m', unit: 'month' });
  expect(series.meta.range.clamped).toBe(true);
  expect(series.data.map((r: { bucket: string; views: number }) => [r.bucket, r.views])).toEqual([['2026-04-01 00:00:00', 1], ['2026-05-01 00:00:00', 1]]);
});

test('a window inside retention is not clamped', async () => {
  expect((await s.ok('/overview', { period: 'last7d' })).meta.range.clamped).toBe(false);
});

test('a window wholly before retention is empty and clamped', async () => {
  const body = await s.ok('/overview', { from: '2026-02-01T00:00:00Z', to: '2026-03-02T00:00:00Z' });
  expect(body.meta.range).toMatchObject({ from: '2026-04-20T12:00:00+00:00', to: '2026-04-20T12:00:00+00:00', clamped: true });
  expect(body.data.visitors).toBe(0);
  // No bucket lies in an empty window: the timeseries and engagement have no row.
  for (const report of ['/timeseries', '/engagement']) {
    const rows = await s.ok(report, { from: '2026-02-01T00:00:00Z', to: '2026-03-02T00:00:00Z', unit: 'day' });
    expect([rows.meta.range.clamped, rows.data]).toEqual([true, []]);
  }
});

test('period=all starts at the earliest event (here before retention, so at the cutoff) and ends now', async () => {
  const body = await s.ok('/overview', { period: 'all', tz: 'Europe/Paris' });
  expect(body.meta.range).toEqual({ from: '2026-04-20T14:00:00+02:00', to: '2026-05-20T14:00:00+02:00', tz: 'Europe/Paris', clamped: true });
  expect(body.data.visitors).toBe(2);
});

test('period=all starts at the earliest event to the millisecond, wherever it was written', async () => {
  const w = await reportSuite({ now: '2026-05-20T12:00:00Z', domain: 'earliest.example' });
  try {
    // Three imports, three parts: the earliest day arrives last, and its first event is not its first row.
    await w.importLines([{ ts: '2026-05-10T08:00:00Z', visitor: 'c', path: '/' }]);
    await w.importLines([{ ts: '2026-05-02T09:00:00Z', visitor: 'b', path: '/' }]);
    await w.importLines([
      { ts: '2026-05-01T18:30:00Z', visitor: 'a', path: '/late' },
      { ts: '2026-05-01T06:15:42.250Z', visitor: 'a', path: '/early' },
      { ts: '2026-05-01T23:59:59Z', visitor: 'd', path: '/' },
    ]);
    // Another site's older event is not this site's start.
    const other = await w.svc.tenant({ domain: 'older.example' });
    await w.importLines([{ ts: '2026-04-20T00:00:00Z', visitor: 'z', path: '/' }], other.siteId);
    const body = await w.ok('/overview', { period: 'all', tz: 'UTC' });
    expect(body.meta.range).toMatchObject({ from: '2026-05-01T06:15:42.250+00:00', to: '2026-05-20T12:00:00+00:00', clamped: false });
    expect(body.data.visitors).toBe(4);
  } finally {
    await w.stop();
  }
});

test('no window given means last30d', async () => {
  const body = await s.ok('/overview');
  expect(body.meta.range).toMatchObject({ from: '2026-04-21T00:00:00+00:00', to: '2026-05-21T00:00:00+00:00', clamped: false });
});

test.each([
  ['/overview', { period: 'today', from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' }, /^period: cannot be combined/],
  ['/overview', { period: 'today', to: '2026-05-02T00:00:00Z' }, /^period: cannot be combined/],
  ['/overview', { from: '2026-05-01T00:00:00Z' }, /^to: is required/],
  ['/overview', { to: '2026-05-01T00:00:00Z' }, /^from: is required/],
  ['/overview', { from: '2026-05-02T00:00:00Z', to: '2026-05-01T00:00:00Z' }, /^from: must be before to/],
  ['/overview', { from: '2026-05-01T00:00:00Z', to: '2026-05-01T00:00:00Z' }, /^from: must be before to/],
  ['/overview', { from: '2026-05-01', to: '2026-05-02' }, /^from: must be an ISO 8601 date-time with an offset/],
  ['/overview', { from: '2026-05-01T00:00:00', to: '2026-05-02T00:00:00' }, /^from: must be an ISO 8601/],
  ['/overview', { from: '1900-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' }, /^from: must lie between/],
  ['/overview', { period: 'forever' }, /^period: must be one of/],
  ['/overview', { tz: 'Mars/Olympus' }, /^tz: "Mars\/Olympus" is not a known IANA timezone/],
  ['/overview', { bots: 'maybe' }, /^bots: must be one of excluded, included/],
  ['/timeseries', { unit: 'year' }, /^unit: must be one of/],
  ['/engagement', { unit: 'fortnight' }, /^unit: must be one of/],
  ['/heatmap', { channel: '' }, /^channel:/],
  ['/realtime', { minutes: '0' }, /^minutes:/],
  ['/realtime', { minutes: '361' }, /^minutes:/],
  ['/realtime/countries', { minutes: '1e3' }, /^minutes:/],
  ['/realtime/countries', { offset: '-3' }, /^offset:/],
])('%s %j → 400 naming the parameter', async (path, params, message) => {
  const res = await s.get(path, params as Record<string, string>);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) });
});

test('a repeated parameter is refused', async () => {
  const res = await s.svc.api('GET', `/sites/${s.t.siteId}/overview?period=today&period=yesterday`, { token: s.t.token });
  expect(res.status).toBe(400);
  expect(res.body.error.message).toMatch(/^period:/);
});

test('tz names are canonicalised; the echo is the canonical name', async () => {
  const body = await s.ok('/overview', { period: 'today', tz: 'europe/paris' });
  expect(body.meta.range.tz).toBe('Europe/Paris');
});

test('reports need analytics:read and a reachable site (403 otherwise)', async () => {
  const noScope = await s.t.key({ scopes: ['goals:read'] });
  expect((await s.get('/overview', {}, noScope.token)).status).toBe(403);
  const other = await s.svc.tenant();
  const res = await s.svc.api('GET', `/sites/${other.siteId}/timeseries`, { token: s.t.token });
  expect(res.status).toBe(403);
  expect((await s.svc.api('GET', `/sites/${s.t.siteId}/heatmap`, {})).status).toBe(401);
});
