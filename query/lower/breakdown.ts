import type { GoalEntry, ReportQuery, Source } from '../ast';
import { DIMENSIONS, type DimensionDef, type RowField } from '../registry/dimensions';
import type { MetricKey } from '../registry/metrics';
import {
  and, array, as, asc, bin, col, desc, fn, inSet, lambda, lit, param, select, str, subquery, type Expr, type SelectNode,
} from '../sql/ast';
import { BUILTIN_EVENTS } from '../../model/goals';
import { baseWhere, goalCondition, metricColumns, metricScope, pageBounds, relationOf, splitBySource } from './common';
import { onlySessionFilters } from '../registry/filters';
import { attributedPayments } from './parts';

/**
 * Breakdowns: rows ranked by visitors (then label) after the filters narrowed the events, paged
 * with one extra row so `has_more` is measured. Figures the ranking source cannot give are read
 * by their own statements: goals on the rollup (every label, alongside the ranking) and revenue
 * (the page's labels only, after it).
 */
export interface BreakdownStatements {
  ranking: SelectNode;
  goals?: SelectNode;
  /** Revenue per label, for dimensions whose rows carry revenue_cents. */
  revenue?: (labels: readonly string[]) => SelectNode;
  /**
   * Rows that follow the ranked ones: labels whose attributed revenue in the window came from
   * sessions with no event in it (a visit before midnight, a purchase after), ranked after every
   * row with visitors (their visitors are 0), by label. Without filters, or with filters on session
   * attributes only (a payment follows them to its session's attributes, lower/parts.ts).
   */
  revenueOnly?: { rows: (skip: number, take: number) => SelectNode; rankedCount: SelectNode };
  extras: readonly string[];
  fields: readonly RowField[];
}

const FIELD_METRIC: Record<RowField, MetricKey | null> = {
  visitors: 'visitors', views: 'views', clicks: 'clicks', goals: 'goals', revenue_cents: null,
};

/** Goal labels an event completes: defined goals by rule, other custom events by their own name. */
export function goalLabels(catalog: readonly GoalEntry[]): Expr {
  const covered = catalog.flatMap((e) => e.match.events);
  const ruled = catalog.map((e) => fn('if', goalCondition(e.match), str(e.label), str('')));
  const sent = fn('if', inSet(col('name'), param('Array(String)', [...BUILTIN_EVENTS, ...covered]), true), fn('toString', col('name')), str(''));
  return fn('arrayJoin', fn('arrayFilter', lambda(['x'], bin('!=', col('x'), str(''))), array(...ruled, sent)));
}

function anyGoal(catalog: readonly GoalEntry[]): Expr {
  return goalCondition({ events: catalog.flatMap((e) => e.match.events), pages: catalog.flatMap((e) => e.match.pages), anyCustom: true });
}

function labelOf(q: ReportQuery, def: DimensionDef): Expr {
  return def.family === 'goal' ? goalLabels(q.catalog!) : def.label();
}

/** Rows the dimension groups: its events (every page-rollup row is a pageview), present values, goal completions. */
function narrowing(q: ReportQuery, def: DimensionDef, source: Source): Expr | undefined {
  return and(source === 'pages' ? undefined : def.events?.(), def.present?.(), def.family === 'goal' ? anyGoal(q.catalog!) : undefined);
}

function grouped(q: ReportQuery, def: DimensionDef, source: Source, keys: MetricKey[], extraWhere?: Expr): SelectNode {
  const extras = Object.entries(def.extra).map(([name, e]) => as(e(), name));
  // A goal row is a completion of that goal, nominated or not: every row counts.
  const scope = def.family === 'goal' ? { ...metricScope(q), counted: lit(1) } : metricScope(q);
  return select({
    columns: [as(labelOf(q, def), 'label'), ...extras, ...metricColumns(keys, source, scope)],
    from: relationOf(q, source),
    where: and(baseWhere(q, { source }), narrowing(q, def, source), extraWhere),
    groupBy: [col('label'), ...Object.keys(def.extra).map((n) => col(n))],
  });
}

/** `def` defaults to the query's dimension; other reports rank their own groupings the same way. */
export function lowerBreakdown(q: ReportQuery, def: DimensionDef = DIMENSIONS[q.dimension!]): BreakdownStatements {
  const source = q.source!;
  const metricKeys = def.fields.flatMap((f) => (FIELD_METRIC[f] ? [FIELD_METRIC[f]!] : []));
  const { here, raw } = splitBySource(metricKeys, source);
  const rank = grouped(q, def, source, here);
  const ranking = {
    ...rank,
    orderBy: [desc(col('visitors')), asc(col('label')), ...Object.keys(def.extra).map((n) => asc(col(n)))],
    ...pageBounds(q.paging!),
  } as SelectNode;
  const goals = raw.length ? grouped(q, def, 'events', raw, goalCondition(q.counted!)) : undefined;
  const carriesRevenue = def.fields.includes('revenue_cents');
  const revenue = carriesRevenue
    ? (labels: readonly string[]) => attributedPayments(q, { label: def.label(), extras: def.extra, only: { labels } })
    : undefined;
  // With filters on other than session attributes a payment counts only when its session had a
  // matching row in the window, so its label is ranked already.
  const followsSessions = !q.filters || onlySessionFilters(q.filters);
  const revenueOnly = carriesRevenue && followsSessions ? revenueOnlyRows(q, def, grouped(q, def, source, [])) : undefined;
  return { ranking, goals, revenue, revenueOnly, extras: Object.keys(def.extra), fields: def.fields };
}

/** See BreakdownStatements.revenueOnly; `ranked` is every ranked (label, extras) row. */
function revenueOnlyRows(q: ReportQuery, def: DimensionDef, ranked: SelectNode): NonNullable<BreakdownStatements['revenueOnly']> {
  const keys = [col('label'), ...Object.keys(def.extra).map((n) => col(n))];
  return {
    rows: (skip, take) => ({
      ...attributedPayments(q, { label: def.label(), extras: def.extra, only: { except: ranked, present: def.present?.() } }),
      orderBy: keys.map((k) => asc(k)),
      limit: param('UInt32', take),
      offset: param('UInt64', skip),
    }) as SelectNode,
    rankedCount: select({ columns: [as(fn('count'), 'ranked')], from: subquery(ranked) }),
  };
}

