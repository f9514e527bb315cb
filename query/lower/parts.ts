import { ROLLUP_SESSION_ATTRIBUTES } from '../../clickhouse/rollups';
import type { FilterNode, ReportQuery } from '../ast';
import { onlySessionFilters } from '../registry/filters';
import { METRICS, type MetricKey } from '../registry/metrics';
import {
  and, as, bin, col, eq, fn, inSet, join, lit, param, scalar, select, str, subquery, table, tuple, union, type Expr, type SelectNode, type UnionNode,
} from '../sql/ast';
import { TABLES, baseWhere, dt, filterCondition, human, relationOf, rowSet, siteParam } from './common';

/**
 * The parts of a report that do not come from the window's events: whole-session figures (bounce,
 * duration), first-seen visitors (new vs returning) and payments.
 */

/** Merge the partial rows of AggregatingMergeTree tables per partition only (a session never spans two). */
export const FINAL_SETTINGS = { do_not_merge_across_partitions_select_final: 1 } as const;

const millis = (c: string, t?: string) => fn('toUnixTimestamp64Milli', col(c, t));
/** A whole session's length in whole milliseconds: seconds as floats lost the median's halves (414.9105 read 414.91). */
const durationMs = (t?: string) => as(bin('-', millis('last_ts', t), millis('first_ts', t)), 'duration_ms');
const sessionTotals = () => table(TABLES.sessions, { final: true });

/**
 * Whole sessions with an event in the window, one row each: total events and pageviews, full
 * duration in milliseconds (`duration_ms`), and `first_in`, the time of their first event inside the window.
 *
 * Rollup path (planned source `slices`): sessions started in the window are a primary-key range of
 * session_totals; sessions started before it that still had events in it ("crossing" sessions, a
 * handful around `from`) are found on the quarter-hour rollup. No set of every session id is built.
 * Raw path: the session ids of the matching events, looked up in session_totals.
 */
export function sessionsInWindow(q: ReportQuery, attrs: readonly SessionAttribute[] = []): SelectNode | UnionNode {
  return q.source === 'slices' ? sessionsByRange(q, attrs) : sessionsBySet(q, attrs);
}

/** Session attributes whole-session rows can carry (session_totals holds the first event's). */
export type SessionAttribute = (typeof ROLLUP_SESSION_ATTRIBUTES)[number];

const attrCols = (attrs: readonly string[], t?: string) => attrs.map((a) => col(a, t));

function sessionsByRange(q: ReportQuery, attrs: readonly SessionAttribute[]): UnionNode {
  const r = q.range!;
  const started = select({
    columns: [col('session_id'), col('events'), col('pageviews'), durationMs(), as(col('session_start'), 'first_in'), ...attrCols(attrs)],
    from: sessionTotals(),
    where: and(
      eq(col('site_id'), siteParam(q)),
      bin('>=', col('session_start'), dt(r.from)),
      bin('<', col('session_start'), dt(r.to)),
      q.humanOnly ? human() : undefined,
      q.filters ? filterCondition(q.filters) : undefined,
    ),
  });
  const crossingWhere = and(baseWhere(q, { source: 'slices' }), bin('<', col('session_start'), dt(r.from)));
  const crossingSlices = select({
    columns: [col('session_id'), as(fn('min', col('slice')), 'first_in')],
    from: relationOf(q, 'slices'),
    where: crossingWhere,
    groupBy: [col('session_id')],
  });
  const earliest = select({ columns: [fn('minOrNull', col('session_start'))], from: relationOf(q, 'slices'), where: crossingWhere });
  const crossingTotals = select({
    columns: [col('session_id'), col('events'), col('pageviews'), col('first_ts'), col('last_ts'), ...attrCols(attrs)],
    from: sessionTotals(),
    where: and(eq(col('site_id'), siteParam(q)), bin('>=', col('session_start'), scalar(earliest)), bin('<', col('session_start'), dt(r.from))),
  });
  const crossing = select({
    columns: [col('session_id', 'c'), col('events', 't'), col('pageviews', 't'), durationMs('t'), col('first_in', 'c'), ...attrCols(attrs, 't')],
    from: subquery(crossingSlices, 'c'),
    joins: [join('INNER', subquery(crossingTotals, 't'), eq(col('session_id', 'c'), col('session_id', 't')))],
  });
  return union(started, crossing);
}

function sessionsBySet(q: ReportQuery, attrs: readonly SessionAttribute[]): SelectNode {
  const source = q.source!;
  const where = baseWhere(q, { source });
  const earliest = select({ columns: [fn('minOrNull', col('session_start'))], from: relationOf(q, source), where });
  const firstIn = select({ columns: [col('session_id'), as(fn('min', col(source === 'slices' ? 'slice' : 'ts')), 'first_in')], from: relationOf(q, source), where, groupBy: [col('session_id')] });
  const totals = select({
    columns: [col('session_id'), col('events'), col('pageviews'), col('first_ts'), col('last_ts'), ...attrCols(attrs)],
    from: sessionTotals(),
    where: and(
      eq(col('site_id'), siteParam(q)),
      bin('>=', col('session_start'), scalar(earliest)),
      bin('<', col('session_start'), dt(q.range!.to)),
      inSet(col('session_id'), rowSet(q, 'session_id')),
    ),
  });
  return select({
    columns: [col('session_id', 'w'), col('events', 't'), col('pageviews', 't'), durationMs('t'), col('first_in', 'w'), ...attrCols(attrs, 't')],
    from: subquery(firstIn, 'w'),
    joins: [join('INNER', subquery(totals, 't'), eq(col('session_id', 'w'), col('session_id', 't')))],
  });
}

export function sessionColumns(keys: readonly MetricKey[]): Expr[] {
  return keys.map((k) => {
    const def = METRICS[k] as { sessions?: () => Expr };
    if (!def.sessions) throw new Error(`metric ${k} is not a whole-session figure`);
    return as(def.sessions(), k);
  });
}

export function sessionFigures(q: ReportQuery, keys: readonly MetricKey[]): SelectNode {
  return select({ columns: sessionColumns(keys), from: subquery(sessionsInWindow(q)), settings: FINAL_SETTINGS });
}

/**
 * Visitors whose first event ever lies in the window. first_seen is read FINAL (one merged row per
 * visitor); for human figures the first human event must be in the window too. With filters the
 * visitor must also have a matching event in the window (`matching`).
 */
export function firstSeenWhere(q: ReportQuery, matching?: Expr): Expr {
  const r = q.range!;
  return and(
    eq(col('site_id'), siteParam(q)),
    bin('>=', col('first_ts'), dt(r.from)),
    bin('<', col('first_ts'), dt(r.to)),
    q.humanOnly ? and(bin('>=', col('first_human_ts'), dt(r.from)), bin('<', col('first_human_ts'), dt(r.to))) : undefined,
    matching,
  );
}

export function newVisitorTotal(q: ReportQuery): SelectNode {
  const matching = q.filters ? inSet(col('visitor_id'), rowSet(q, 'visitor_id')) : undefined;
  return select({
    columns: [as(fn('count'), 'new_visitors')],
    from: table(TABLES.firstSeen, { final: true }),
    where: firstSeenWhere(q, matching),
  });
}

/** Succeeded payments paid in the window, in the site's currency (a payment row is read FINAL). */
export function paymentRows(q: ReportQuery, columns: string[]): SelectNode {
  return select({
    columns: columns.map((c) => col(c)),
    from: table(TABLES.payments, { final: true }),
    where: and(
      eq(col('site_id'), siteParam(q)),
      eq(col('is_deleted'), lit(0)),
      eq(col('status'), str('succeeded')),
      eq(fn('upper', fn('toString', col('currency'))), str(q.currency.toUpperCase())),
      bin('>=', col('paid_at'), dt(q.range!.from)),
      bin('<', col('paid_at'), dt(q.range!.to)),
    ),
  });
}

/** Revenue is net of refunds and of lost disputes (chargebacks). */
const NET_COLUMNS = ['amount_cents', 'refunded_cents', 'disputed_cents'];
const NET = () => fn('sum', bin('-', bin('-', col('amount_cents'), col('refunded_cents')), col('disputed_cents')));

export function paymentTotals(q: ReportQuery): SelectNode {
  return select({
    columns: [as(fn('count'), 'payments'), as(NET(), 'revenue_cents')],
    from: subquery(paymentRows(q, NET_COLUMNS)),
  });
}

const SESSION_ATTRS = ['session_id', ...ROLLUP_SESSION_ATTRIBUTES];

export interface PaymentGrouping {
  label: Expr;
  extras: Readonly<Record<string, () => Expr>>;
  /** The labels to give (a page's), or the (label, extras) rows to leave out (those ranked already). */
  only: { labels: readonly string[] } | { except: SelectNode; present?: Expr };
}

/** The grouping's restriction: the named labels, or any row with a value but not one of `except`. */
function grouping(group: PaymentGrouping): Expr | undefined {
  if ('labels' in group.only) return inSet(col('label'), param('Array(String)', [...group.only.labels]));
  const key = tuple(col('label'), ...Object.keys(group.extras).map((n) => col(n)));
  return and(group.only.present, inSet(key, group.only.except, true));
}

function paymentFilter(filters: FilterNode, q: ReportQuery): Expr {
  // Unqualified subjects resolve to the session side: the payment side has no attribute columns.
  return onlySessionFilters(filters) ? filterCondition(filters) : inSet(col('session_id', 's'), rowSet(q, 'session_id'));
}

/**
 * Payments joined to the session they are attributed to: the paying visitor's latest session
 * started before the payment (ASOF JOIN). Filters on session attributes alone select payments whose
 * attributed session has those attributes, whether or not it had an event in the window, exactly as
 * an unfiltered breakdown row holds them (so drilling into a row keeps its revenue). Other filters
 * (paths, goals, links, crawler kinds) need a row in the window matching them in that session.
 * `group` adds a label column and restricts it (PaymentGrouping).
 */
export function attributedPayments(q: ReportQuery, group?: PaymentGrouping): SelectNode {
  const paying = paymentRows(q, ['visitor_id']);
  const sessionsOfPayers = select({
    columns: [col('visitor_id'), col('session_start'), ...SESSION_ATTRS.map((c) => col(c))],
    from: table(TABLES.slices),
    where: and(eq(col('site_id'), siteParam(q)), inSet(col('visitor_id'), paying)),
  });
  const keys = group ? [as(group.label, 'label'), ...Object.entries(group.extras).map(([n, e]) => as(e(), n))] : [];
  return select({
    columns: [...keys, as(fn('count'), 'payments'), as(NET(), 'revenue_cents')],
    from: subquery(paymentRows(q, ['visitor_id', 'paid_at', ...NET_COLUMNS]), 'p'),
    joins: [join('ASOF LEFT', subquery(sessionsOfPayers, 's'), and(
      eq(col('visitor_id', 'p'), col('visitor_id', 's')),
      bin('>=', col('paid_at', 'p'), col('session_start', 's')),
    ))],
    where: and(
      q.filters ? paymentFilter(q.filters, q) : undefined,
      // A payment attributed to no session (no visitor id, or none we saw) counts in totals only:
      // unmatched, its session columns are empty and would match a `(direct)` or `(not set)` row.
      group || q.filters ? bin('!=', col('session_id', 's'), lit(0)) : undefined,
      group ? grouping(group) : undefined,
    ),
    groupBy: group ? [col('label'), ...Object.keys(group.extras).map((n) => col(n))] : undefined,
  });
}
