import { agg, and, bin, col, eq, fn, lit, str, type Expr } from '../sql/ast';

/**
 * Report figures (PRODUCT.md §4). Each entry says which part of the plan computes it and how:
 *  - `events`: an aggregate over the window's events (raw events or the session rollup, which
 *    carries the same columns plus summed counters), counted under a row condition `when`;
 *  - `sessions`: over whole sessions (bounce and duration look at the whole session, not the window);
 *  - `first_seen`: visitors whose first event ever lies in the window;
 *  - `payments`: succeeded payments paid in the window;
 *  - `derived`: arithmetic on the others, done after the rows come back.
 * `null` for a source means that source cannot compute the figure (the planner reads this).
 */
export const METRIC_KEYS = [
  'visitors', 'sessions', 'views', 'goals', 'goal_value_cents', 'crawler_views', 'clicks', 'conversion_rate',
  'new_visitors', 'returning_visitors', 'bounce_rate', 'avg_session_seconds', 'median_session_seconds',
  'payments', 'revenue_cents', 'revenue_per_visitor_cents',
  // Internal parts of derived figures, never shown on their own.
  'converted', 'all_visitors', 'visitors_estimate',
] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];

/** What an event-part aggregate may refer to. */
export interface MetricScope {
  /** Row condition every human figure counts under (goal filter, human-only in timeseries); undefined = all rows. */
  when?: Expr;
  /** Row condition without the human part (crawler_views counts crawlers under the same filters). */
  filterWhen?: Expr;
  /** A counted goal completion (nominated revenue-signal goals, or every goal). */
  counted: Expr;
}

type EventAgg = (s: MetricScope) => Expr;

/** An estimate at or under this is recounted exactly (100k plus a margin of many standard errors). */
export const ESTIMATE_EXACT_BELOW = 120_000;

export interface MetricDef {
  type: 'integer' | 'number';
  part: 'events' | 'sessions' | 'first_seen' | 'payments' | 'derived';
  /** Over raw events / the session rollup / the page rollup (null: that rollup cannot answer). */
  events?: { raw: EventAgg; slices: EventAgg | null; pages?: EventAgg | null };
  /** Over whole-session rows (columns events, pageviews, duration_ms). */
  sessions?: () => Expr;
  /** After the rows are in: figures of the same row by name. */
  derive?: (r: Readonly<Record<string, number>>) => number;
}

const ifw = (name: string, s: MetricScope, ...args: Expr[]) =>
  s.when ? fn(`${name}If`, ...args, s.when) : fn(name, ...args);
/** countIf(cond), or count() when every row counts. */
const countWhere = (cond: Expr) => (cond.kind === 'literal' && cond.value === 1 ? fn('count') : fn('countIf', cond));
export const isPageview = () => eq(col('name'), str('pageview'));
const isCrawler = () => eq(col('is_bot'), lit(1));
/**
 * Nearest integer, halves up, as Math.round does for the figures derived in TypeScript. TRAP:
 * ClickHouse's round() rounds a float's halves to even (a mean of 12.5 s would show as 12).
 */
const halfUp = (x: Expr) => fn('floor', bin('+', x, lit(0.5)));

/** A percentage to 2 decimals, halves up: the arithmetic of the TypeScript-derived conversion_rate. */
const pct = (part: Expr, whole: Expr) =>
  fn('if', eq(whole, lit(0)), lit(0), bin('/', halfUp(bin('*', bin('/', part, whole), lit(10_000))), lit(100)));
/** Sessions under 5 s (duration_ms, whole milliseconds) are left out of duration figures. */
const LONG_ENOUGH = () => bin('>=', col('duration_ms'), lit(5000));


export const METRICS = {
  visitors: {
    type: 'integer', part: 'events',
    events: {
      raw: (s) => ifw('uniqExact', s, col('visitor_id')),
      slices: (s) => ifw('uniqExact', s, col('visitor_id')),
      pages: (s) => ifw('uniqExact', s, col('visitor_id')),
    },
  },
  sessions: {
    type: 'integer', part: 'events',
    events: { raw: (s) => ifw('uniqExact', s, col('session_id')), slices: (s) => ifw('uniqExact', s, col('session_id')) },
    // Over whole-session rows (one per session) it is a plain count.
    sessions: () => fn('count'),
  },
  views: {
    type: 'integer', part: 'events',
    events: {
      raw: (s) => fn('countIf', and(isPageview(), s.when)),
      slices: (s) => ifw('sum', s, col('pageviews')),
      pages: (s) => ifw('sum', s, col('views')),
    },
  },
  goals: { type: 'integer', part: 'events', events: { raw: (s) => countWhere(and(s.counted, s.when)), slices: null } },
  goal_value_cents: {
    type: 'integer', part: 'events', events: { raw: (s) => fn('sumIf', col('value_cents'), and(s.counted, s.when)), slices: null },
  },
  crawler_views: {
    type: 'integer', part: 'events',
    events: {
      raw: (s) => fn('countIf', and(isPageview(), isCrawler(), s.filterWhen)),
      slices: (s) => fn('sumIf', col('pageviews'), and(isCrawler(), s.filterWhen)),
    },
  },
  clicks: { type: 'integer', part: 'events', events: { raw: (s) => countWhere(and(s.when)), slices: null } },
  conversion_rate: {
    type: 'number', part: 'derived',
    derive: (r) => (r.all_visitors > 0 ? Math.round((r.converted / r.all_visitors) * 10_000) / 100 : 0),
  },
  /** Visitors with a counted goal completion (narrowed by goal filters). */
  converted: { type: 'integer', part: 'events', events: { raw: (s) => fn('uniqExactIf', col('visitor_id'), and(s.counted, s.when)), slices: null } },
  /**
   * HyperLogLog estimate (uniqCombined64, about 0.3% standard error): PRODUCT.md §4 allows 1% beyond
   * 100k visitors, where an exact set of ids costs three times as much. Below ESTIMATE_EXACT_BELOW
   * the figure is recounted exactly.
   */
  visitors_estimate: {
    type: 'integer', part: 'events',
    events: { raw: () => fn('uniqCombined64', col('visitor_id')), slices: () => fn('uniqCombined64', col('visitor_id')) },
  },
  /** Visitors ignoring goal filters: the conversion-rate denominator. */
  all_visitors: { type: 'integer', part: 'events', events: { raw: () => fn('uniqExact', col('visitor_id')), slices: () => fn('uniqExact', col('visitor_id')) } },
  new_visitors: { type: 'integer', part: 'first_seen' },
  returning_visitors: { type: 'integer', part: 'derived', derive: (r) => Math.max(0, r.visitors - r.new_visitors) },
  bounce_rate: {
    type: 'number', part: 'sessions',
    sessions: () => pct(fn('countIf', and(eq(col('events'), lit(1)), eq(col('pageviews'), lit(1)))), fn('count')),
  },
  avg_session_seconds: {
    type: 'integer', part: 'sessions',
    sessions: () => fn('if', eq(fn('countIf', LONG_ENOUGH()), lit(0)), lit(0), halfUp(bin('/', fn('avgIf', col('duration_ms'), LONG_ENOUGH()), lit(1000)))),
  },
  median_session_seconds: {
    type: 'number', part: 'sessions',
    sessions: () =>
      fn('if', eq(fn('countIf', LONG_ENOUGH()), lit(0)), lit(0),
        bin('/', halfUp(agg('quantileExactInclusiveIf', [0.5], col('duration_ms'), LONG_ENOUGH())), lit(1000))),
  },
  payments: { type: 'integer', part: 'payments' },
  revenue_cents: { type: 'integer', part: 'payments' },
  revenue_per_visitor_cents: {
    type: 'integer', part: 'derived', derive: (r) => (r.visitors > 0 ? Math.round(r.revenue_cents / r.visitors) : 0),
  },
} satisfies Record<MetricKey, MetricDef>;
