import type { ReportQuery } from '../ast';
import {
  and, as, asc, bin, col, desc, eq, fn, inSet, lambda, lit, param, select, str, subquery, table, tuple, type Expr, type SelectNode,
} from '../sql/ast';
import { dateInZone } from '../window/zoned';
import { pageBounds, siteParam } from './common';

/**
 * Search reports (`/search/*`): figures imported from the search console, one row per (Pacific
 * date, term, hostname, path) in `search_console`, read FINAL without tombstones (a re-import replaces
 * a day whole: integrations/search-console.ts). Ratios are stored as summable parts (`position_sum` =
 * position x impressions), so every total is exact.
 *
 * Beside its term rows, an imported day holds its property total: the row whose term, hostname and
 * path are empty (the console never reports an empty query). Term rows leave out anonymised queries
 * and count a result once per URL, so they do not sum to the console's own totals; the totals report
 * reads the day's total row, and sums the term rows only for a day imported before total rows were.
 */
export const SEARCH_PROVIDER = 'search_console';
export const SEARCH_TABLE = 'search_console';
/** The key of a day's property total row. */
export const DAY_TOTAL = { term: '', hostname: '', path: '' } as const;

export interface SearchDates {
  first: string;
  last: string;
}

/**
 * The console's days are Pacific dates and have no finer grain. A window covers the dates it spans
 * in its own tz (`last7d` is seven dates in any zone), each read as the console's date of that name;
 * a window starting or ending inside a day takes that whole day. An empty window covers none.
 */
export function searchDates(q: ReportQuery): SearchDates | null {
  const r = q.range!;
  if (r.from >= r.to) return null;
  return { first: dateInZone(r.from, q.tz), last: dateInZone(r.to - 1, q.tz) };
}

function rowsWhere(q: ReportQuery, d: SearchDates): Expr {
  return and(
    eq(col('site_id'), siteParam(q)),
    eq(col('is_deleted'), lit(0)),
    bin('>=', col('date'), param('Date', d.first)),
    bin('<=', col('date'), param('Date', d.last)),
  );
}

/** Term rows only (not the days' total rows), of the named terms when given. */
function termRowsWhere(q: ReportQuery, d: SearchDates): Expr {
  return and(
    rowsWhere(q, d),
    bin('!=', col('term'), str(DAY_TOTAL.term)),
    q.terms ? inSet(col('term'), param('Array(String)', [...q.terms])) : undefined,
  );
}

const rows = () => table(SEARCH_TABLE, { final: true });

/**
 * Whether the site has a live search-console connection, and `growing_from`: the first date the
 * console still collected at the last import or refresh (empty when it said none), so a window
 * reaching it is partial even where those days have no rows yet (spec: `partial` is true "when the
 * window includes recent days that will still grow").
 */
export function searchConnection(q: ReportQuery): SelectNode {
  return select({
    columns: [as(fn('count'), 'connections'), as(fn('any', col('incomplete_from')), 'growing_from')],
    from: table('integrations', { final: true }),
    where: and(eq(col('site_id'), siteParam(q)), eq(col('provider'), str(SEARCH_PROVIDER)), eq(col('is_deleted'), lit(0))),
  });
}

/** Per day: its total row's figure, or the sum of its term rows when it has no total row. */
function dayFigure(column: string): Expr {
  const isTotal = eq(col('term'), str(DAY_TOTAL.term));
  return fn('if', bin('>', fn('countIf', isTotal), lit(0)), fn('sumIf', col(column), isTotal), fn('sum', col(column)));
}

/** The window's totals: per day (inner names differ from the outer aliases on purpose), then summed. */
export function lowerSearchTotals(q: ReportQuery, d: SearchDates): SelectNode {
  const perDay = select({
    columns: [
      as(dayFigure('clicks'), 'c'), as(dayFigure('impressions'), 'i'), as(dayFigure('position_sum'), 'ps'),
      as(fn('countIf', eq(col('is_final'), lit(0))), 'nf'),
    ],
    from: rows(),
    where: rowsWhere(q, d),
    groupBy: [col('date')],
  });
  return select({
    columns: [
      as(fn('sum', col('c')), 'clicks'), as(fn('sum', col('i')), 'impressions'),
      as(fn('sum', col('ps')), 'position_sum'), as(fn('sum', col('nf')), 'not_final'),
    ],
    from: subquery(perDay),
  });
}

/** Term x page sums over the window (inner names differ from the outer aliases on purpose). */
function byTermPage(q: ReportQuery, d: SearchDates): SelectNode {
  return select({
    columns: [
      col('term'), as(fn('toString', col('hostname')), 'host'), col('path'),
      as(fn('sum', col('clicks')), 'c'), as(fn('sum', col('impressions')), 'i'), as(fn('sum', col('position_sum')), 'ps'),
    ],
    from: rows(),
    where: termRowsWhere(q, d),
    groupBy: [col('term'), col('host'), col('path')],
  });
}

const element = (x: Expr, n: number) => fn('tupleElement', x, lit(n));

/** Per term: totals, and its three most-clicked pages (then by hostname and path). */
export function lowerSearchTerms(q: ReportQuery, d: SearchDates): SelectNode {
  const byClicks = lambda(['x'], tuple(bin('-', lit(0), fn('toInt64', element(col('x'), 3))), element(col('x'), 1), element(col('x'), 2)));
  return select({
    columns: [
      col('term'), as(fn('sum', col('c')), 'clicks'), as(fn('sum', col('i')), 'impressions'), as(fn('sum', col('ps')), 'position_sum'),
      as(fn('arraySlice', fn('arraySort', byClicks, fn('groupArray', tuple(col('host'), col('path'), col('c')))), lit(1), lit(3)), 'pages'),
    ],
    from: subquery(byTermPage(q, d)),
    groupBy: [col('term')],
    orderBy: [desc(col('clicks')), desc(col('impressions')), asc(col('term'))],
    ...pageBounds(q.paging!),
  });
}

/** Every term x page pairing of the named terms, most clicked first. */
export function lowerSearchTermPages(q: ReportQuery, d: SearchDates): SelectNode {
  return select({
    columns: [col('term'), as(col('host'), 'hostname'), col('path'), as(col('c'), 'clicks'), as(col('i'), 'impressions')],
    from: subquery(byTermPage(q, d)),
    orderBy: [desc(col('clicks')), desc(col('impressions')), asc(col('term')), asc(col('hostname')), asc(col('path'))],
    ...pageBounds(q.paging!),
  });
}
