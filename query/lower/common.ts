import { isoToCh } from '../../clickhouse/meta';
import type { FilterNode, GoalMatch, ReportQuery, Source } from '../ast';
import { FILTERS } from '../registry/filters';
import { OPERATORS } from '../registry/operators';
import { METRICS, type MetricKey, type MetricScope } from '../registry/metrics';
import {
  and, as, bin, col, eq, fn, inSet, lit, not, or, param, select, str, table, type Expr, type Relation, type SelectNode,
} from '../sql/ast';
import { globToRegex } from '../../core/glob';

/**
 * Building blocks every report's lowering shares: the tables, the window's row conditions on a
 * source, filters and goal predicates as SQL, and event-part aggregates from the metric registry.
 */
export const TABLES = {
  events: 'events',
  slices: 'session_slices',
  sessions: 'sessions',
  firstSeen: 'visitor_first',
  payments: 'payments',
} as const;

export const BUILTIN_EVENTS = ['pageview', 'exit_link', 'file_download'];

export const dt = (ms: number) => param("DateTime64(3, 'UTC')", isoToCh(new Date(ms)));
export const siteParam = (q: ReportQuery) => param('UUID', q.siteId);

export const relationOf = (source: Source): Relation => table(source === 'slices' ? TABLES.slices : TABLES.events);
export const timeOf = (source: Source) => col(source === 'slices' ? 'slice' : 'ts');

/** Completions a goal predicate accepts, as a row condition on raw events. */
export function goalCondition(m: GoalMatch): Expr {
  const parts: Expr[] = [];
  if (m.events.length) parts.push(inSet(col('name'), param('Array(String)', [...m.events])));
  if (m.pages.length) {
    const pages = m.pages.map((p) => fn('match', col('pathname'), str(globToRegex(p))));
    parts.push(and(eq(col('name'), str('pageview')), or(...pages)));
  }
  if (m.anyCustom) parts.push(inSet(col('name'), param('Array(String)', BUILTIN_EVENTS), true));
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
  const r = o.range ?? q.range!;
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
export function metricColumns(keys: readonly MetricKey[], source: Source, scope: MetricScope): Expr[] {
  return keys.map((k) => {
    const def = METRICS[k] as { events?: { raw: (s: MetricScope) => Expr; slices: ((s: MetricScope) => Expr) | null } };
    const build = source === 'slices' ? def.events?.slices : def.events?.raw;
    if (!build) throw new Error(`metric ${k} cannot be computed on ${source}`);
    return as(build(scope), k);
  });
}

/** Event-part metrics the source can compute, and the rest (computed on raw events). */
export function splitBySource(keys: readonly MetricKey[], source: Source): { here: MetricKey[]; raw: MetricKey[] } {
  if (source === 'events') return { here: [...keys], raw: [] };
  const can = (k: MetricKey) => !!(METRICS[k] as { events?: { slices: unknown } }).events?.slices;
  return { here: keys.filter(can), raw: keys.filter((k) => !can(k)) };
}

/** `SELECT <column> FROM <source rows>`: a set for IN. */
export function rowSet(q: ReportQuery, column: string, o: WhereOptions = {}): SelectNode {
  const source = o.source ?? q.source!;
  return select({ columns: [col(column)], from: relationOf(source), where: baseWhere(q, { ...o, source }) });
}
