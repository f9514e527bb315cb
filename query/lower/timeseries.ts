import type { ReportQuery, Source } from '../ast';
import { BUCKETS } from '../registry/buckets';
import { traitsOf } from '../registry/reports';
import type { MetricKey } from '../registry/metrics';
import { and, as, col, fn, inSet, select, str, table, tuple, type Expr, type SelectNode } from '../sql/ast';
import {
  TABLES, baseWhere, goalCondition, goalLeavesCondition, human, metricColumns, metricScope, relationOf, splitBySource, timeOf,
} from './common';
import { FINAL_SETTINGS, firstSeenWhere } from './parts';

/**
 * Timeseries: figures per bucket, gap-filled afterwards from the planner's labels. The scan keeps
 * crawler rows (crawler_views is always present) and counts human figures under `is_bot = 0`.
 */
export const TIMESERIES_FIELDS = [
  'visitors', 'views', 'new_visitors', 'returning_visitors', 'crawler_views', 'goals', 'goal_value_cents',
] as const satisfies readonly MetricKey[];

const EVENT_PART: MetricKey[] = ['visitors', 'views', 'crawler_views', 'goals', 'goal_value_cents'];

/** `YYYY-MM-DD HH:MM:SS` of the bucket holding `ts`, in the report's bucket zone. */
export function bucketLabel(q: ReportQuery, ts: Expr): Expr {
  const tz = traitsOf(q.report).buckets === 'utc' ? 'UTC' : q.tz;
  return BUCKETS[q.unit!].label(ts, str(tz));
}

function eventPart(q: ReportQuery, source: Source, keys: MetricKey[], narrow?: Expr): SelectNode {
  const goal = goalLeavesCondition(q.filters);
  const scope = metricScope(q, { when: and(q.humanOnly ? human() : undefined, goal), filterWhen: goal });
  if (scope.when?.kind === 'literal') scope.when = undefined;
  return select({
    columns: [as(bucketLabel(q, timeOf(source)), 'label'), ...metricColumns(keys, source, scope)],
    from: relationOf(q, source),
    where: and(baseWhere(q, { source, human: false, goalFilters: false }), narrow),
    groupBy: [col('label')],
  });
}

export interface TimeseriesStatements {
  events: SelectNode;
  goals?: SelectNode;
  newVisitors: SelectNode;
}

export function lowerTimeseries(q: ReportQuery): TimeseriesStatements {
  const { here, raw } = splitBySource(EVENT_PART, q.source!);
  // A new visitor falls in the bucket of their first counted event: with human figures, their first
  // human event (a visitor first seen as a crawler hit was new in a bucket with no visitors, 0 beside 1).
  const label = bucketLabel(q, col(q.humanOnly ? 'first_human_ts' : 'first_ts'));
  // Without filters a visitor's first event is itself a row of its bucket; with filters it must match them.
  const matched = q.filters
    ? inSet(tuple(col('visitor_id'), label), select({
        columns: [col('visitor_id'), bucketLabel(q, timeOf(q.source!))],
        from: relationOf(q, q.source!),
        where: baseWhere(q),
      }))
    : undefined;
  return {
    events: eventPart(q, q.source!, here),
    goals: raw.length ? eventPart(q, 'events', raw, goalCondition(q.counted!)) : undefined,
    newVisitors: select({
      columns: [as(label, 'label'), as(fn('count'), 'new_visitors')],
      from: table(TABLES.firstSeen, { final: true }),
      where: firstSeenWhere(q, matched),
      groupBy: [col('label')],
      settings: FINAL_SETTINGS,
    }),
  };
}
