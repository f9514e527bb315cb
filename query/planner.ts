import { invalidRequest } from '../core/errors';
import { BUILTIN_EVENTS } from '../model/goals';
import type { FilterNode, GoalEntry, GoalMatch, ReportQuery, RollupSource } from './ast';
import { BUCKETS, type BucketUnit } from './registry/buckets';
import { DIMENSIONS } from './registry/dimensions';
import { FILTERS, leaves, type FilterDef } from './registry/filters';
import { traitsOf } from './registry/reports';
import { bucketLabels } from './window/buckets';
import { addCalendar, clampToRetention, resolveWindow, type Span } from './window/resolve';

/**
 * The planner: an ordered list of pure passes `(q, ctx) => q`. Each pass fills in one planned field
 * of the ReportQuery; adding behaviour means adding a pass here. `plan` runs them in order.
 */
export interface GoalRule {
  name: string;
  kind: 'event' | 'page';
  event_name: string | null;
  path_pattern: string | null;
  revenue_signal: boolean;
}

export interface PlanContext {
  now: number;
  retentionDays: number;
  /** The site's earliest datum (event, payment or search day), or null: `period=all` starts there. */
  earliestDatum: number | null;
  goals: readonly GoalRule[];
  /** Count every goal, whatever the site nominated (an alert on one goal measures that goal's completions). */
  countEveryGoal?: boolean;
}

export type Pass = (q: ReportQuery, ctx: PlanContext) => ReportQuery;

export const MAX_BUCKETS = 10_000;

/** Period or from/to → UTC [from, to) resolved in tz. */
export const resolveRange: Pass = (q, ctx) => {
  const span = resolveWindow(q.window, { now: ctx.now, tz: q.tz, earliestDatum: ctx.earliestDatum });
  return { ...q, range: { ...span, clamped: false } };
};

/** Windows reaching before the organisation's retention start at the cutoff, flagged clamped. */
export const clampRetention: Pass = (q, ctx) => ({ ...q, range: clampToRetention(q.range!, ctx.now, ctx.retentionDays) });

const TWO_DAYS_MS = 2 * 24 * 3600 * 1000;

/**
 * Default unit by window length (thresholds inclusive, on the local calendar). Two days are hourly
 * counted either way: 48 real hours across a spring-forward night span 49 wall-clock hours, and two
 * calendar days across a fall-back night last 49 real hours; both are "up to 2 days".
 */
export function defaultUnit(span: Span, tz: string): BucketUnit {
  if (span.to - span.from <= TWO_DAYS_MS || span.to <= addCalendar(span.from, tz, 'day', 2)) return 'hour';
  if (span.to <= addCalendar(span.from, tz, 'month', 3)) return 'day';
  if (span.to <= addCalendar(span.from, tz, 'month', 24)) return 'week';
  return 'month';
}

/** Timeseries buckets are local to tz; engagement buckets are cut at UTC boundaries. */
export const resolveBuckets: Pass = (q) => {
  const kind = traitsOf(q.report).buckets;
  if (!kind) return q;
  const tz = kind === 'utc' ? 'UTC' : q.tz;
  const unit = q.unit ?? defaultUnit(q.range!, q.tz);
  const buckets = bucketLabels(unit, q.range!, tz, MAX_BUCKETS);
  if (!buckets) throw invalidRequest(`unit: this window holds more than ${MAX_BUCKETS} ${unit} buckets; choose a larger unit or a shorter window`);
  return { ...q, unit, buckets };
};

/** Human figures exclude crawlers unless bots=included; realtime never counts them; AI crawler reports always do. */
export const excludeBots: Pass = (q) => {
  const bots = traitsOf(q.report).bots;
  return { ...q, humanOnly: bots === 'human' || (bots === 'asked' && q.bots === 'excluded') };
};

const NO_MATCH: GoalMatch = { events: [], pages: [], anyCustom: false };

const ruleMatch = (g: GoalRule): GoalMatch =>
  g.kind === 'event' ? { events: [g.event_name ?? ''], pages: [], anyCustom: false } : { events: [], pages: [g.path_pattern ?? ''], anyCustom: false };

function unionMatch(ms: readonly GoalMatch[]): GoalMatch {
  return {
    events: [...new Set(ms.flatMap((m) => m.events))].sort(),
    pages: [...new Set(ms.flatMap((m) => m.pages))].sort(),
    anyCustom: ms.some((m) => m.anyCustom),
  };
}

/**
 * Completions of the goal labelled `label`: defined goals of that name in any case (names are unique
 * regardless of case), or sent events of exactly that name (event names are case-sensitive data).
 */
function labelMatch(label: string, catalog: readonly GoalEntry[]): GoalMatch {
  const sent: GoalMatch = BUILTIN_EVENTS.includes(label) ? NO_MATCH : { events: [label], pages: [], anyCustom: false };
  const named = label.toLowerCase();
  return unionMatch([...catalog.filter((e) => e.label.toLowerCase() === named).map((e) => e.match), sent]);
}

function replaceGoalLeaves(node: FilterNode, catalog: readonly GoalEntry[]): FilterNode {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { ...node, items: node.items.map((n) => replaceGoalLeaves(n, catalog)) };
    case 'not':
      return { ...node, item: replaceGoalLeaves(node.item, catalog) };
    case 'cond':
      return node.filter === 'goal' ? { kind: 'goal', label: node.value, match: labelMatch(node.value, catalog) } : node;
    case 'goal':
      return node;
  }
}

/**
 * Goal rules are evaluated at read time: the catalog lists defined goals; goal filters become
 * their completions; `counted` is the nominated revenue-signal goals, or every goal (all custom
 * events and all page rules) when none is nominated, whatever the filters (spec: goals count only
 * the nominated goals). A goal filter narrows the rows, so it counts the completions that are both.
 */
export const expandGoalRules: Pass = (q, ctx) => {
  const catalog: GoalEntry[] = ctx.goals.map((g) => ({ label: g.name, match: ruleMatch(g) }));
  const filters = q.filters && replaceGoalLeaves(q.filters, catalog);
  const nominated = ctx.countEveryGoal ? [] : ctx.goals.filter((g) => g.revenue_signal);
  const everyGoal: GoalMatch = { events: [], pages: [...new Set(ctx.goals.flatMap((g) => (g.kind === 'page' ? [g.path_pattern ?? ''] : [])))].sort(), anyCustom: true };
  const counted = nominated.length ? unionMatch(nominated.map(ruleMatch)) : everyGoal;
  return { ...q, catalog, filters, counted };
};

/**
 * Decide tables: the quarter-hour session rollup answers reports grouped by time or by a session
 * attribute, the page rollup path and hostname breakdowns, when every filter's subject is on that
 * rollup's rows and the bucket unit sits on quarter hours (partial quarters at the window's ends are
 * read from raw events, see relationOf). Everything else (links, goals, minute buckets, realtime,
 * event-level filters) reads raw events.
 */
export const decideSource: Pass = (q) => {
  const family = q.dimension ? DIMENSIONS[q.dimension].family : null;
  const rollup: RollupSource | null =
    traitsOf(q.report).rawOnly ? null
    : family === 'page' ? 'pages'
    : family === null || family === 'session' ? 'slices'
    : null;
  const filtersOk = !!rollup && leaves(q.filters).every((l) => l.kind === 'cond' && (FILTERS[l.filter] as FilterDef).rollups.includes(rollup));
  const unitOk = !q.unit || BUCKETS[q.unit].quarterAligned;
  return { ...q, source: rollup && filtersOk && unitOk ? rollup : 'events' };
};

export const PASSES: readonly Pass[] = [resolveRange, clampRetention, resolveBuckets, excludeBots, expandGoalRules, decideSource];

export function plan(q: ReportQuery, ctx: PlanContext): ReportQuery {
  return PASSES.reduce((acc, pass) => pass(acc, ctx), q);
}
