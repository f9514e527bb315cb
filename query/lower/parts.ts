import type { ReportQuery } from '../ast';
import { METRICS, type MetricKey } from '../registry/metrics';
import {
  and, as, bin, col, eq, fn, inSet, join, lit, param, select, str, subquery, table, type Expr, type SelectNode,
} from '../sql/ast';
import { TABLES, baseWhere, dt, relationOf, rowSet, siteParam, type WhereOptions } from './common';

/**
 * The parts of a report that do not come from the window's events: whole-session figures (bounce,
 * duration), first-seen visitors (new vs returning) and payments.
 */

/** Merge the partial rows of the sessions table across parts as they are read. */
export const FINAL_SETTINGS = { do_not_merge_across_partitions_select_final: 1 } as const;

const millis = (c: string) => fn('toUnixTimestamp64Milli', col(c));

/**
 * Whole sessions that have a row in the window (matching the filters): their total events and
 * pageviews and their full duration in seconds, whatever part of them lies outside the window.
 * session_start is bounded below by the earliest session start seen in the window, so the
 * sessions table is read by its primary key.
 */
export function wholeSessions(q: ReportQuery, o: WhereOptions & { restrict?: boolean } = {}): SelectNode {
  const source = o.source ?? q.source!;
  const earliest = select({ columns: [fn('minOrNull', col('session_start'))], from: relationOf(source), where: baseWhere(q, { ...o, source }) });
  return select({
    columns: [
      col('session_id'), col('events'), col('pageviews'),
      as(bin('/', bin('-', millis('last_ts'), millis('first_ts')), lit(1000)), 'duration'),
    ],
    from: table(TABLES.sessions, { final: true }),
    where: and(
      eq(col('site_id'), siteParam(q)),
      bin('>=', col('session_start'), { kind: 'scalar', select: earliest }),
      bin('<', col('session_start'), dt(q.range!.to)),
      o.restrict === false ? undefined : inSet(col('session_id'), rowSet(q, 'session_id', o)),
    ),
  });
}

export function sessionColumns(keys: readonly MetricKey[]): Expr[] {
  return keys.map((k) => {
    const def = METRICS[k] as { sessions?: () => Expr };
    if (!def.sessions) throw new Error(`metric ${k} is not a whole-session figure`);
    return as(def.sessions(), k);
  });
}

export function sessionTotals(q: ReportQuery, keys: readonly MetricKey[]): SelectNode {
  return select({ columns: sessionColumns(keys), from: subquery(wholeSessions(q)), settings: FINAL_SETTINGS });
}

/** Visitors of the window with their first event ever, kept when that first event is in [from, to). */
export function firstSeen(q: ReportQuery): SelectNode {
  return select({
    columns: [col('visitor_id'), as(fn('min', col('first_ts')), 'first_seen')],
    from: table(TABLES.firstSeen),
    where: and(eq(col('site_id'), siteParam(q)), inSet(col('visitor_id'), rowSet(q, 'visitor_id'))),
    groupBy: [col('visitor_id')],
    having: and(bin('>=', col('first_seen'), dt(q.range!.from)), bin('<', col('first_seen'), dt(q.range!.to))),
  });
}

export function newVisitorTotal(q: ReportQuery): SelectNode {
  return select({ columns: [as(fn('count'), 'new_visitors')], from: subquery(firstSeen(q)) });
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

const NET = () => fn('sum', bin('-', col('amount_cents'), col('refunded_cents')));

export function paymentTotals(q: ReportQuery): SelectNode {
  return select({
    columns: [as(fn('count'), 'payments'), as(NET(), 'revenue_cents')],
    from: subquery(paymentRows(q, ['amount_cents', 'refunded_cents'])),
  });
}

const SESSION_ATTRS = [
  'session_id', 'entry_path', 'referrer', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term',
  'gad_campaign_id', 'country', 'region', 'city', 'browser', 'os', 'device',
];

/**
 * Payments joined to the session they are attributed to: the paying visitor's latest session
 * started before the payment (ASOF JOIN). With filters, only payments whose session had a row in
 * the window matching them count. `group` adds a label column and restricts it to `labels`.
 */
export interface PaymentGrouping {
  label: Expr;
  extras: Readonly<Record<string, () => Expr>>;
  labels: readonly string[];
}

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
    from: subquery(paymentRows(q, ['visitor_id', 'paid_at', 'amount_cents', 'refunded_cents']), 'p'),
    joins: [join('ASOF LEFT', subquery(sessionsOfPayers, 's'), and(
      eq(col('visitor_id', 'p'), col('visitor_id', 's')),
      bin('>=', col('paid_at', 'p'), col('session_start', 's')),
    ))],
    where: and(
      q.filters ? inSet(col('session_id', 's'), rowSet(q, 'session_id')) : undefined,
      group ? inSet(col('label'), param('Array(String)', [...group.labels])) : undefined,
    ),
    groupBy: group ? [col('label'), ...Object.keys(group.extras).map((n) => col(n))] : undefined,
  });
}
