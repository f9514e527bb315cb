import type { ReportName } from '../../../query/ast';
import { lowerBreakdown } from '../../../query/lower/breakdown';
import { lowerEngagement } from '../../../query/lower/engagement';
import { lowerHeatmap } from '../../../query/lower/heatmap';
import { lowerOverview } from '../../../query/lower/overview';
import { lowerRealtime, lowerRealtimeCountries } from '../../../query/lower/realtime';
import { lowerTimeseries } from '../../../query/lower/timeseries';
import { parseReport } from '../../../query/params';
import { plan, type GoalRule } from '../../../query/planner';
import type { SelectNode } from '../../../query/sql/ast';
import { compile, type Compiled } from '../../../query/sql/compiler';

/**
 * Golden {sql, params} per report shape. The snapshot file is the reviewed golden output: a change
 * to it is a change to the SQL we send, and must be read as such.
 */
const SITE = { id: '5e1f0000-0000-4000-8000-000000000001', currency: 'EUR' };
const GOALS: GoalRule[] = [
  { name: 'Signup', kind: 'event', event_name: 'signup', path_pattern: null, revenue_signal: true },
  { name: 'Pricing page', kind: 'page', event_name: null, path_pattern: '/pricing/**', revenue_signal: false },
];
const zones = (tz: string) => tz;

function planned(report: ReportName, params: Record<string, string>, goals: GoalRule[] = GOALS) {
  const q = parseReport(report, params, SITE, zones);
  return plan(q, { now: Date.parse('2026-05-10T12:34:56.789Z'), retentionDays: 1095, earliestDatum: null, goals });
}

const c = (s: SelectNode | undefined): Compiled | undefined => (s ? compile(s, { database: 'tally' }) : undefined);
const all = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v && typeof v === 'object' && (v as SelectNode).kind === 'select').map(([k, v]) => [k, c(v as SelectNode)]));

describe('overview', () => {
  test('last30d, no filters: rollup for traffic, raw events for counted goals', () => {
    const q = planned('overview', { period: 'last30d' });
    expect(q.source).toBe('slices');
    expect(all({ ...lowerOverview(q) })).toMatchSnapshot();
  });

  test('event-level and goal filters: raw events, goal filter moved into the aggregates', () => {
    const q = planned('overview', { period: 'last7d', tz: 'Europe/Paris', filter_path: '/pricing', filter_goal: 'Signup' });
    expect(q.source).toBe('events');
    expect(all({ ...lowerOverview(q) })).toMatchSnapshot();
  });

  test('rolling window with a session filter: rollup plus raw edges; payments attributed to filtered sessions', () => {
    const q = planned('overview', { period: 'last24h', filter_country: 'de', bots: 'included' });
    expect(q.source).toBe('slices');
    expect(all({ ...lowerOverview(q) })).toMatchSnapshot();
  });
});

describe('timeseries', () => {
  test('today in Paris, hourly, on the rollup', () => {
    const q = planned('timeseries', { period: 'today', tz: 'Europe/Paris' });
    expect(all({ ...lowerTimeseries(q) })).toMatchSnapshot();
  });

  test('minute buckets with a filter: raw events, new visitors must match the filter', () => {
    const q = planned('timeseries', { period: 'last24h', unit: 'minute', filter_hostname: 'Shop.Example.com' });
    expect(all({ ...lowerTimeseries(q) })).toMatchSnapshot();
  });
});

describe('breakdowns', () => {
  test.each([
    ['channel', { period: 'last30d' }],
    ['region', { period: 'month', tz: 'Asia/Kolkata' }],
    ['path', { period: 'last7d', filter_channel: 'Direct', limit: '10', offset: '20' }],
    ['exit_link', { period: 'last7d' }],
    ['goal', { period: 'last7d' }],
    ['referrer', { period: 'last7d', filter_path_pattern: '/blog/**' }],
  ])('%s', (dimension, params) => {
    const q = planned('breakdown', { ...params, dimension } as Record<string, string>);
    const s = lowerBreakdown(q);
    expect({ ranking: c(s.ranking), goals: c(s.goals), revenue: s.revenue && c(s.revenue(['a', 'b'])) }).toMatchSnapshot();
  });
});

test('heatmap in Kolkata narrowed to one channel', () => {
  expect(c(lowerHeatmap(planned('heatmap', { period: 'last7d', tz: 'Asia/Kolkata', channel: 'Organic Search', filter_path: '/ignored' })))).toMatchSnapshot();
});

test('engagement: UTC buckets of the first event in the window, whole-session figures', () => {
  expect(c(lowerEngagement(planned('engagement', { period: 'last7d', tz: 'America/New_York' })))).toMatchSnapshot();
});

test('realtime and realtime countries', () => {
  expect(c(lowerRealtime(planned('realtime', {})))).toMatchSnapshot();
  expect(c(lowerRealtimeCountries(planned('realtime_countries', { minutes: '60', limit: '5' })))).toMatchSnapshot();
});
