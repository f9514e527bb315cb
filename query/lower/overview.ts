import type { ReportQuery } from '../ast';
import type { MetricKey } from '../registry/metrics';
import { and, select, type SelectNode } from '../sql/ast';
import { baseWhere, goalCondition, goalLeavesCondition, metricColumns, metricScope, relationOf, splitBySource } from './common';
import { attributedPayments, newVisitorTotal, paymentTotals, sessionTotals } from './parts';

/**
 * Overview: one row of figures. Event figures are read with goal filters moved from WHERE into the
 * aggregates, so the conversion-rate denominator (all_visitors) ignores them in the same scan.
 */
export const OVERVIEW_FIELDS = [
  'visitors', 'sessions', 'views', 'goals', 'payments', 'new_visitors', 'returning_visitors', 'bounce_rate',
  'conversion_rate', 'avg_session_seconds', 'revenue_cents', 'goal_value_cents', 'revenue_per_visitor_cents',
] as const satisfies readonly MetricKey[];

const EVENT_PART: MetricKey[] = ['visitors', 'sessions', 'views', 'goals', 'goal_value_cents', 'converted', 'all_visitors'];

export interface OverviewStatements {
  events: SelectNode;
  /** Goal figures from raw events when the rollup answered the rest. */
  goals?: SelectNode;
  sessions: SelectNode;
  firstSeen: SelectNode;
  payments: SelectNode;
  /** Payments attributed to filtered sessions (only when there are filters and payments). */
  attributed?: SelectNode;
}

export function lowerOverview(q: ReportQuery): OverviewStatements {
  const source = q.source!;
  const when = goalLeavesCondition(q.filters);
  const scope = metricScope(q, { when, filterWhen: when });
  const { here, raw } = splitBySource(EVENT_PART, source);
  const events = select({
    columns: metricColumns(here, source, scope),
    from: relationOf(source),
    where: baseWhere(q, { goalFilters: false }),
  });
  // Raw goal figures only need counted completions: narrowing to them keeps the scan small.
  const goals = raw.length
    ? select({
        columns: metricColumns(raw, 'events', scope),
        from: relationOf('events'),
        where: and(baseWhere(q, { source: 'events', goalFilters: false }), goalCondition(q.counted!)),
      })
    : undefined;
  return {
    events,
    goals,
    sessions: sessionTotals(q, ['bounce_rate', 'avg_session_seconds']),
    firstSeen: newVisitorTotal(q),
    payments: paymentTotals(q),
    attributed: q.filters ? attributedPayments(q) : undefined,
  };
}
