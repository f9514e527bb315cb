import type { ReportName } from '../../query/ast';
import { DIMENSIONS, DIMENSION_KEYS } from '../../query/registry/dimensions';
import { FIXTURE } from './reports-fixture';
import { reportSuite, type ReportSuite } from './reports-support';

/**
 * The planner may answer from the quarter-hour rollup (with raw edges) or from raw events; both must
 * give the same answer. Each case is planned once, then run with each source forced.
 */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z', domain: 'shop.example' });
  await s.importLines([
    ...FIXTURE,
    // A session crossing midnight into the window (starts 23:50 on 05-13, continues 00:05 on 05-14).
    { ts: '2026-05-13T23:50:00Z', visitor: 'E', path: '/late', country: 'GB' },
    { ts: '2026-05-14T00:05:00Z', visitor: 'E', path: '/later', country: 'GB' },
    { ts: '2026-05-14T00:06:00Z', visitor: 'E', path: '/later', name: 'Signup', country: 'GB' },
  ]);
});
afterAll(() => s.stop());

const both = (report: ReportName, params: Record<string, string>) => s.bothSources(report, params);

const WINDOWS: [string, Record<string, string>][] = [
  ['aligned week', { period: 'last7d' }],
  ['unaligned ends', { from: '2026-05-14T00:03:00Z', to: '2026-05-20T11:07:30Z' }],
  ['inside one quarter hour', { from: '2026-05-18T10:01:00Z', to: '2026-05-18T10:04:00Z' }],
  ['rolling 24h in Kolkata', { period: 'last24h', tz: 'Asia/Kolkata' }],
  ['bots included', { period: 'last7d', bots: 'included' }],
  ['session filter', { period: 'last7d', filter_country: 'GB' }],
  ['page filters', { period: 'last7d', filter_path_pattern: '/**', filter_hostname: 'shop.example' }],
];

describe.each(WINDOWS)('%s', (_name, params) => {
  test.each([['overview'], ['timeseries'], ['heatmap'], ['engagement']] as [ReportName][])('%s', async (report) => {
    const { planned, rollup, raw } = await both(report, params);
    // Page filters are not on session rows: the planner reads raw events (forcing the rollup is not valid).
    if (params.filter_path_pattern && (report === 'overview' || report === 'timeseries')) return expect(planned.source).toBe('events');
    expect(planned.source).toBe('slices');
    expect(rollup.data).toEqual(raw.data);
  });

  test.each(DIMENSION_KEYS.filter((d) => ['session', 'page'].includes(DIMENSIONS[d].family)).map((d) => [d]))('breakdown %s', async (dimension) => {
    const { planned, rollup, raw } = await both('breakdown', { ...params, dimension });
    if (params.filter_path_pattern && DIMENSIONS[dimension].family === 'session') return expect(planned.source).toBe('events');
    expect(planned.source).toBe(DIMENSIONS[dimension].family === 'page' ? 'pages' : 'slices');
    expect(rollup.data).toEqual(raw.data);
    expect(rollup.meta).toEqual(raw.meta);
  });
});

test('the crossing session counts in the window it reaches into (rollup and raw alike)', async () => {
  const { rollup, raw } = await both('overview', { period: 'last7d', filter_country: 'GB' });
  // Two of its events are in the window; its bounce/duration look at the whole session (16 min).
  expect(rollup.data).toMatchObject({ visitors: 1, sessions: 1, views: 1, goals: 1, bounce_rate: 0, avg_session_seconds: 960 });
  expect(raw.data).toEqual(rollup.data);
});
