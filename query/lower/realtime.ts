import type { ReportQuery } from '../ast';
import { and, as, asc, bin, col, desc, select, str, type SelectNode } from '../sql/ast';
import { baseWhere, metricColumns, metricScope, pageBounds, relationOf } from './common';

/** Realtime: human events in the last `minutes`, always on raw events (the window is minutes long). */
export function lowerRealtime(q: ReportQuery): SelectNode {
  return select({
    columns: metricColumns(['visitors', 'views'], 'events', metricScope(q)),
    from: relationOf(q, 'events'),
    where: baseWhere(q, { source: 'events' }),
  });
}

/** Per country; visitors without geo have no row. */
export function lowerRealtimeCountries(q: ReportQuery): SelectNode {
  return select({
    columns: [as(col('country'), 'country_code'), ...metricColumns(['visitors', 'views'], 'events', metricScope(q))],
    from: relationOf(q, 'events'),
    where: and(baseWhere(q, { source: 'events' }), bin('!=', col('country'), str(''))),
    groupBy: [col('country_code')],
    orderBy: [desc(col('visitors')), asc(col('country_code'))],
    ...pageBounds(q.paging!),
  });
}
