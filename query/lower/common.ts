import { isoToCh } from '../../clickhouse/meta';
import { ROLLUP_SESSION_ATTRIBUTES } from '../../clickhouse/rollups';
import type { FilterNode, GoalMatch, ReportQuery, RollupSource, Source } from '../ast';
import { FILTERS } from '../registry/filters';
import { OPERATORS } from '../registry/operators';
import { METRICS, type MetricKey, type MetricScope } from '../registry/metrics';
import {
  and, as, bin, col, eq, fn, inSet, lit, not, or, param, select, str, subquery, table, union, type Expr, type Relation, type SelectNode,
} from '../sql/ast';
import { globToRegex } from '../../core/glob';
import { fetchSize, type Paging } from '../../core/paging';
import { BUILTIN_EVENTS } from '../../model/goals';

/**
 * Building blocks every report's lowering shares: the tables, the window's row conditions on a
 * source, filters and goal predicates as SQL, and event-part aggregates from the metric registry.
 */
export const TABLES = {
  events: 'events',
  slices: 'session_slices',
  pages: 'page_slices',
  sessions: 'session_totals',
  firstSeen: 'first_seen',
  payments: 'payments',
} as const;

/** LIMIT/OFFSET of a paged statement: one row more than the page, so `has_more` is measured. */
export const pageBounds = (paging: Paging) => ({ limit: param('UInt32', fetchSize(paging)), offset: param('UInt64', paging.offset) });

export const dt = (ms: number) => param("DateTime64(3, 'UTC')", isoToCh(new Date(ms)));
export const siteParam = (q: ReportQuery) => param('UUID', q.siteId);

export const timeOf = (source: Source) => col(source === 'events' ? 'ts' : 'slice');

const QUARTER_MS = 15 * 60_000;
const quarterFloor = (ms: number) => Math.floor(ms / QUARTER_MS) * QUARTER_MS;
const quarterCeil = (ms: number) => Math.ceil(ms / QUARTER_MS) * QUARTER_MS;

/** How raw events become rows of a rollup (for the partial quarter hours at a window's ends). */
interface RollupShape {
  table: string;
  columns: readonly string[];
  /** Sort-key columns; the others are SimpleAggregateFunction columns. */
  keys: ReadonlySet<string>;
  /** Columns computed from a raw event; the rest are read as they are. */
  shaped(): Record<string, Expr>;
  /** Raw events that feed the rollup. */
  events?(): Expr;
}

const quarter = () => fn('toDateTime', fn('toStartOfFifteenMinutes', col('ts')), str('UTC'));

const ROLLUPS: Record<RollupSource, RollupShape> = {
  slices: {
    table: TABLES.slices,
    columns: ['site_id', 'slice', 'session_id', 'is_bot', 'bot_kind', 'visitor_id', 'session_start', 'pageviews', 'events', ...ROLLUP_SESSION_ATTRIBUTES],
    keys: new Set(['site_id', 'slice', 'session_id', 'is_bot', 'bot_kind']),
    shaped: () => ({
      slice: quarter(),
      bot_kind: fn('toString', col('bot_kind')),
      pageviews: fn('toUInt64', eq(col('name'), str('pageview'))),
      events: fn('toUInt64', lit(1)),
    }),
  },
  pages: {
    table: TABLES.pages,
    columns: ['site_id', 'slice', 'hostname', 'pathname', 'session_id', 'is_bot', 'bot_kind', 'visitor_id', 'session_start', 'views', ...ROLLUP_SESSION_ATTRIBUTES],
    keys: new Set(['site_id', 'slice', 'hostname', 'pathname', 'session_id', 'is_bot', 'bot_kind']),
    shaped: () => ({ slice: quarter(), views: fn('toUInt64', lit(1)) }),
    events: () => eq(col('name'), str('pageview')),
  },
};

/** Raw events of the given spans shaped as rollup rows (one row per event). */
function rollupEdges(q: ReportQuery, shape: RollupShape, spans: { from: number; to: number }[]): SelectNode {
  const shaped = shape.shaped();
  return select({
    columns: shape.columns.map((c) => (shaped[c] ? as(shaped[c], c) : col(c))),
    from: table(TABLES.events),
    where: and(
      eq(col('site_id'), siteParam(q)),
      shape.events?.(),
      or(...spans.map((s) => and(bin('>=', col('ts'), dt(s.from)), bin('<', col('ts'), dt(s.to))))),
    ),
  });
}

/**
 * The rows a source reads. Raw events are the events table. A rollup is its table when the window
 * sits on quarter hours; otherwise its whole quarters come from the rollup and the partial quarters
 * at either end from raw events shaped as rollup rows, so every window (rolling, clamped, `all`)
 * reads the rollup and stays exact.
 */
export function relationOf(q: ReportQuery, source: Source): Relation {
  if (source === 'events') return table(TABLES.events);
  const shape = ROLLUPS[source];
  const r = q.range!;
  const inner = { from: quarterCeil(r.from), to: quarterFloor(r.to) };
  if (inner.from === r.from && inner.to === r.to) return table(shape.table);
  if (inner.from >= inner.to) return subquery(rollupEdges(q, shape, [{ from: r.from, to: r.to }]));
  const whole = select({
    // Plain values, not aggregate-function column types, so both halves share one row type.
    columns: shape.columns.map((c) => (shape.keys.has(c) ? col(c) : as(fn('identity', col(c)), c))),
    from: table(shape.table),
    where: and(eq(col('site_id'), siteParam(q)), bin('>=', col('slice'), dt(inner.from)), bin('<', col('slice'), dt(inner.to))),
  });
  const edges = [{ from: r.from, to: inner.from }, { from: inner.to, to: r.to }].filter((e) => e.from < e.to);
  return subquery(union(whole, rollupEdges(q, shape, edges)));
}

/** Completions a goal predicate accepts, as a row condition on raw events. */
export function goalCondition(m: GoalMatch): Expr {
  const parts: Expr[] = [];
  if (m.events.length) parts.push(inSet(col('name'), param('Array(String)', [...m.events])));
  if (m.pages.length) {
    const pages = m.pages.map((p) => fn('match', col('pathname'), str(globToRegex(p))));
    parts.push(and(eq(col('name'), str('pageview')), or(...pages)));
  }
  if (m.anyCustom) parts.push(inSet(col('name'), param('Array(String)', [...BUILTIN_EVENTS]), true));
  return parts.length ? or(...parts) : lit(0);
}

export function filterCondition(node: FilterNode): Expr {
  switch (node.kind) {
    case 'and':
      return and(...node.items.map(filterCondition));
    case 'or':
      return or(...node.items.map(filterCondition));
    case 'not':
      return not(filterCondition(node.item));
    case 'goal':
      return goalCondition(node.match);
    case 'cond': {
      const def = FILTERS[node.filter];
      if (!def.subject) throw new Error(`filter ${node.filter} must be expanded by the planner`);
      const scope = 'scope' in def ? def.scope : undefined;
      return and(scope?.(), OPERATORS[node.op].condition(def.subject(), node.value));
    }
  }
}

/** The filter tree without its top-level goal leaves (they narrow figures, not the base rows). */
export function withoutGoalLeaves(node: FilterNode | null): FilterNode | null {
  if (!node || node.kind === 'goal') return null;
  if (node.kind !== 'and') return node;
  const items = node.items.filter((n) => n.kind !== 'goal');
  return items.length === 0 ? null : items.length === 1 ? items[0] : { kind: 'and', items };
}

export function goalLeavesCondition(node: FilterNode | null): Expr | undefined {
  if (!node) return undefined;
  if (node.kind === 'goal') return goalCondition(node.match);
  if (node.kind !== 'and') return undefined;
  const goals = node.items.filter((n) => n.kind === 'goal');
  return goals.length ? and(...goals.map(filterCondition)) : undefined;
}

export interface WhereOptions {
  source?: Source;
  /** Keep only human events (default: the planned humanOnly). */
  human?: boolean;
  /** Include top-level goal filters (default true). */
  goalFilters?: boolean;
  /** Override the time range. */
  range?: { from: number; to: number };
}

/** Site, window, bots and filters: the rows a report reads. */
export function baseWhere(q: ReportQuery, o: WhereOptions = {}): Expr {
  const source = o.source ?? q.source ?? 'events';
  const exact = o.range ?? q.range!;
  // Rollup rows carry their quarter's start: whole quarters around the window (the relation trims it).
  const r = source !== 'events' ? { from: quarterFloor(exact.from), to: quarterCeil(exact.to) } : exact;
  const filters = o.goalFilters === false ? withoutGoalLeaves(q.filters) : q.filters;
  return and(
    eq(col('site_id'), siteParam(q)),
    bin('>=', timeOf(source), dt(r.from)),
    bin('<', timeOf(source), dt(r.to)),
    (o.human ?? q.humanOnly) ? eq(col('is_bot'), lit(0)) : undefined,
    filters ? filterCondition(filters) : undefined,
  );
}

export const human = () => eq(col('is_bot'), lit(0));

/** The scope event-part metrics count under. */
export function metricScope(q: ReportQuery, o: { when?: Expr; filterWhen?: Expr } = {}): MetricScope {
  return { when: o.when, filterWhen: o.filterWhen, counted: goalCondition(q.counted!) };
}

/** Aliased aggregate columns for event-part metrics on a source (throws if the source cannot). */
type EventAggs = { raw: (s: MetricScope) => Expr; slices: ((s: MetricScope) => Expr) | null; pages?: ((s: MetricScope) => Expr) | null };
const aggOn = (k: MetricKey, source: Source) => {
  const e = (METRICS[k] as { events?: EventAggs }).events;
  return source === 'events' ? e?.raw : e?.[source] ?? null;
};

export function metricColumns(keys: readonly MetricKey[], source: Source, scope: MetricScope): Expr[] {
  return keys.map((k) => {
    const build = aggOn(k, source);
    if (!build) throw new Error(`metric ${k} cannot be computed on ${source}`);
    return as(build(scope), k);
  });
}

/** Event-part metrics the source can compute, and the rest (computed on raw events). */
export function splitBySource(keys: readonly MetricKey[], source: Source): { here: MetricKey[]; raw: MetricKey[] } {
  const can = (k: MetricKey) => !!aggOn(k, source);
  return { here: keys.filter(can), raw: keys.filter((k) => !can(k)) };
}

/** `SELECT <column> FROM <source rows>`: a set for IN. */
export function rowSet(q: ReportQuery, column: string, o: WhereOptions = {}): SelectNode {
  const source = o.source ?? q.source!;
  return select({ columns: [col(column)], from: relationOf(q, source), where: baseWhere(q, { ...o, source }) });
}
