import type { ReportQuery } from '../ast';
import { as, asc, col, fn, select, str, type SelectNode } from '../sql/ast';
import { baseWhere, metricColumns, metricScope, relationOf, timeOf } from './common';

/** Heatmap: ISO weekday and hour in tz; sparse by construction (only cells with rows are grouped). */
export function lowerHeatmap(q: ReportQuery): SelectNode {
  const source = q.source!;
  const local = fn('toTimeZone', timeOf(source), str(q.tz));
  return select({
    columns: [
      as(fn('toDayOfWeek', local), 'day'),
      as(fn('toHour', local), 'hour'),
      ...metricColumns(['views', 'visitors'], source, metricScope(q)),
    ],
    from: relationOf(source),
    where: baseWhere(q),
    groupBy: [col('day'), col('hour')],
    orderBy: [asc(col('day')), asc(col('hour'))],
  });
}
