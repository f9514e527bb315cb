import type { ReportQuery } from '../ast';
import type { MetricKey } from '../registry/metrics';
import { as, col, select, subquery, type SelectNode } from '../sql/ast';
import { FINAL_SETTINGS, sessionColumns, sessionsInWindow } from './parts';
import { bucketLabel } from './timeseries';

/**
 * Engagement: each session belongs to the UTC bucket of its first event in the window; its bounce
 * and duration are those of the whole session.
 */
export const ENGAGEMENT_FIELDS = ['sessions', 'bounce_rate', 'median_session_seconds'] as const satisfies readonly MetricKey[];

export function lowerEngagement(q: ReportQuery): SelectNode {
  return select({
    columns: [as(bucketLabel(q, col('first_in')), 'label'), ...sessionColumns(ENGAGEMENT_FIELDS)],
    from: subquery(sessionsInWindow(q)),
    groupBy: [col('label')],
    settings: FINAL_SETTINGS,
  });
}
