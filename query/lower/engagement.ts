import type { ReportQuery } from '../ast';
import type { MetricKey } from '../registry/metrics';
import { as, col, eq, fn, join, select, subquery, type SelectNode } from '../sql/ast';
import { baseWhere, relationOf, timeOf } from './common';
import { FINAL_SETTINGS, sessionColumns, wholeSessions } from './parts';
import { bucketLabel } from './timeseries';

/**
 * Engagement: each session belongs to the UTC bucket of its first event in the window; its bounce
 * and duration are those of the whole session.
 */
export const ENGAGEMENT_FIELDS = ['sessions', 'bounce_rate', 'median_session_seconds'] as const satisfies readonly MetricKey[];

export function lowerEngagement(q: ReportQuery): SelectNode {
  const source = q.source!;
  const firstInWindow = select({
    columns: [col('session_id'), as(bucketLabel(q, fn('min', timeOf(source))), 'label')],
    from: relationOf(source),
    where: baseWhere(q),
    groupBy: [col('session_id')],
  });
  return select({
    columns: [col('label'), ...sessionColumns(ENGAGEMENT_FIELDS)],
    from: subquery(firstInWindow, 'w'),
    joins: [join('INNER', subquery(wholeSessions(q, { restrict: false }), 's'), eq(col('session_id', 'w'), col('session_id', 's')))],
    groupBy: [col('label')],
    settings: FINAL_SETTINGS,
  });
}
