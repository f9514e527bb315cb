import type { Store } from '../clickhouse/store';
import { globMatch, globToRegex } from '../core/glob';
import type { FunnelWindow, MatchOp, Step } from '../model/funnels';
import { BUILTIN_EVENTS, type Goal } from '../model/goals';
import { execute } from './execute';
import { dt, TABLES } from './lower/common';
import {
  agg, and, array, as, bin, col, eq, fn, inSet, lambda, lit, or, param, select, str, subquery, table, tuple, union,
  type Expr, type SelectNode, type UnionNode,
} from './sql/ast';

/**
 * The funnel report: per step, the visitors who reached it (in order, each step within the funnel's
 * window of the first), with conversion from the first and from the previous step. One ClickHouse
 * `windowFunnel` pass over the site's events in [from, to), plus its succeeded payments when a step
 * asks for one. Built as a SQL AST like every report (query/sql): every value is a bound parameter;
 * the window is a literal from FUNNEL_WINDOW_MS.
 */

// TRAP: windowFunnel needs its window as a literal (not a parameter), so it is only ever read from
// this table, keyed by the five allowed values, in the unit of the funnel key (see funnelQuery).
const FUNNEL_WINDOW_MS = {
  3600: 3_600_000, 86400: 86_400_000, 604800: 604_800_000, 2592000: 2_592_000_000, 7776000: 7_776_000_000,
} as const satisfies Record<FunnelWindow, number>;

/**
 * TRAP: windowFunnel adds one entry per condition a row satisfies, all at the row's timestamp, and
 * chains them; so one page view matching steps 1 and 2 (a repeated or overlapping step) reached
 * step 2 by itself. Rows are therefore exploded into one entry per matched step, on a key that
 * orders entries of the same millisecond: the visitor's events of that millisecond ranked by their
 * lowest matched step, then their highest, then their id (ranked by the lowest step alone, a view
 * of /pricing matching steps 1 and 2 sorted before a view of / matching step 1, and two events
 * matching the same steps tied: neither chain was found), and within one event the higher step
 * first, so an event can never follow itself. 16 slots hold the 10 steps and the first 16 events of
 * a millisecond. Known limit: when the first step's event was not the first ranked of its millisecond
 * (several events of that millisecond matched the first step), the window's end can admit an event 1 ms
 * late (the ranking shares the key with the timestamp; docs/RESOURCES.md).
 */
const KEY_SLOTS = 16;
const KEY_SCALE = KEY_SLOTS * KEY_SLOTS;
/**
 * The window in key units. An entry in the window's last millisecond is at most 15 ordinals and one step
 * later in key units (16 x 15 - 1 = 239); one a millisecond later is at least 256 - 9 units past, when the
 * first step's event ranks first in its millisecond (it matched the first step: it does unless another
 * event of that millisecond did too). 255 extra units let every entry 1 ms late in.
 */
const windowKeyUnits = (w: FunnelWindow) => FUNNEL_WINDOW_MS[w] * KEY_SCALE + KEY_SLOTS * (KEY_SLOTS - 1) - 1;

/** One entry per match operator: its SQL over a column and a bound value, and the same test in JS. */
type Matcher = { sql(column: Expr, value: Expr): Expr; js(v: string, x: string): boolean; value(v: string): string };
const same = (v: string) => v;
const MATCHERS = {
  equals: { sql: (c, v) => eq(c, v), js: (v, x) => x === v, value: same },
  starts_with: { sql: (c, v) => fn('startsWith', c, v), js: (v, x) => x.startsWith(v), value: same },
  ends_with: { sql: (c, v) => fn('endsWith', c, v), js: (v, x) => x.endsWith(v), value: same },
  contains: { sql: (c, v) => bin('>', fn('position', c, v), lit(0)), js: (v, x) => x.includes(v), value: same },
  glob: { sql: (c, v) => fn('match', c, v), js: (v, x) => globMatch(v, x), value: globToRegex },
} as const satisfies Record<MatchOp, Matcher>;

/** A defined goal: `page` = a path glob, `event` = a custom event under another name. */
export type DefinedGoal = Pick<Goal, 'name' | 'kind' | 'event_name' | 'path_pattern'>;

export interface FunnelReportInput {
  siteId: string;
  steps: Step[];
  windowSeconds: FunnelWindow;
  fromMs: number;
  toMs: number;
  includeBots: boolean;
  /** The site's defined goals (page rules and named events). */
  goals: DefinedGoal[];
}

export interface FunnelStepResult {
  step: number;
  visitors: number;
  conversion_from_first: number;
  conversion_from_previous: number;
}

const isEvent = eq(col('is_payment'), lit(0));
const isPageview = and(isEvent, eq(col('name'), str('pageview')));

/** The condition of each step over the funnel's rows (events and payments, see funnelQuery). */
export function stepConditions(steps: Step[], goals: DefinedGoal[]): Expr[] {
  return steps.map((step) => {
    if (step.kind === 'payment') return eq(col('is_payment'), lit(1));
    const m = MATCHERS[step.match];
    const wanted = str(m.value(step.value));
    if (step.kind === 'view') return and(isPageview, m.sql(col('pathname'), wanted));
    // A goal step: sent goals by event name, and defined goals whose *goal* name matches (a page rule
    // by its path glob, an event goal by its event name).
    const sent = and(isEvent, inSet(col('name'), array(...BUILTIN_EVENTS.map(str)), true), m.sql(col('name'), wanted));
    const defined = goals
      .filter((g) => m.js(step.value, g.name))
      .map((g) => g.kind === 'page'
        ? and(isPageview, fn('match', col('pathname'), str(globToRegex(g.path_pattern ?? ''))))
        : and(isEvent, eq(col('name'), str(g.event_name ?? ''))));
    return or(sent, ...defined);
  });
}

const element = (x: Expr, n: number) => fn('tupleElement', x, lit(n));
const millis = (c: Expr) => fn('toUInt64', fn('toUnixTimestamp64Milli', c));

/** The site's events in the window, and its succeeded payments when a step asks for one, as rows of one shape. */
function funnelRows(input: FunnelReportInput): SelectNode | UnionNode {
  const site = eq(col('site_id'), param('UUID', input.siteId));
  const events = select({
    columns: [col('visitor_id'), as(millis(col('ts')), 't'), as(fn('toString', col('name')), 'name'), col('pathname'), as(lit(0), 'is_payment'),
      as(fn('cityHash64', col('event_id')), 'eid')],
    from: table(TABLES.events),
    where: and(site, bin('>=', col('ts'), dt(input.fromMs)), bin('<', col('ts'), dt(input.toMs)),
      input.includeBots ? undefined : eq(col('is_bot'), lit(0))),
  });
  if (!input.steps.some((s) => s.kind === 'payment')) return events;
  const payments = select({
    columns: [col('visitor_id'), as(millis(col('paid_at')), 't'), as(str(''), 'name'), as(str(''), 'pathname'), as(lit(1), 'is_payment'),
      as(fn('cityHash64', col('payment_id')), 'eid')],
    from: table(TABLES.payments, { final: true }),
    // A payment no checkout id attributes has no visitor: visitor 0 would be one phantom visitor of them all.
    where: and(site, eq(col('is_deleted'), lit(0)), eq(col('status'), str('succeeded')), bin('!=', col('visitor_id'), lit(0)),
      bin('>=', col('paid_at'), dt(input.fromMs)), bin('<', col('paid_at'), dt(input.toMs))),
  });
  return union(events, payments);
}

/** Visitors per deepest level reached: one windowFunnel pass over the rows, one entry per matched step. */
function funnelQuery(input: FunnelReportInput, conditions: Expr[]): SelectNode {
  const step = col('step');
  const matched = select({
    columns: [col('visitor_id'), col('t'), col('eid'), as(fn('arrayFilter', lambda(['i', 'hit'], eq(col('hit'), lit(1))), fn('range', lit(conditions.length)), array(...conditions)), 'steps')],
    from: subquery(funnelRows(input)),
  });
  const steps = (x: Expr) => element(x, 1);
  const byStepsThenId = lambda(['x'], tuple(fn('arrayElement', steps(col('x')), lit(1)), fn('arrayElement', steps(col('x')), lit(-1)), element(col('x'), 2)));
  const millisecond = select({
    columns: [col('visitor_id'), col('t'), as(fn('arraySort', byStepsThenId, agg('groupArray', [], tuple(col('steps'), col('eid')))), 'events')],
    from: subquery(matched),
    where: fn('notEmpty', col('steps')),
    groupBy: [col('visitor_id'), col('t')],
  });
  const ranked = select({
    columns: [col('visitor_id'), col('t'), as(fn('arrayJoin', fn('arrayEnumerate', col('events'))), 'ordinal'),
      as(steps(fn('arrayElement', col('events'), col('ordinal'))), 'steps')],
    from: subquery(millisecond),
  });
  const slot = lit(KEY_SLOTS);
  const ordinalSlot = fn('least', bin('-', col('ordinal'), lit(1)), lit(KEY_SLOTS - 1));
  const entries = select({
    columns: [col('visitor_id'), as(fn('arrayJoin', col('steps')), 'step'),
      as(fn('toUInt64', bin('+', bin('*', bin('+', bin('*', col('t'), slot), ordinalSlot), slot), bin('-', lit(KEY_SLOTS - 1), step))), 'key')],
    from: subquery(ranked),
  });
  const levels = select({
    columns: [col('visitor_id'), as(agg('windowFunnel', [windowKeyUnits(input.windowSeconds)], col('key'), ...conditions.map((_c, i) => eq(step, lit(i)))), 'level')],
    from: subquery(entries),
    groupBy: [col('visitor_id')],
  });
  return select({
    columns: [col('level'), as(fn('toUInt64', fn('count')), 'visitors')],
    from: subquery(levels),
    where: bin('>', col('level'), lit(0)),
    groupBy: [col('level')],
  });
}

const pct = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0);

export async function runFunnelReport(store: Store, input: FunnelReportInput): Promise<FunnelStepResult[]> {
  const rows = await execute<{ level: number; visitors: number }>(store, funnelQuery(input, stepConditions(input.steps, input.goals)));
  // windowFunnel gives the deepest step each visitor reached; reaching step k means level >= k.
  const reached = input.steps.map((_s, i) => rows.filter((r) => r.level >= i + 1).reduce((a, r) => a + r.visitors, 0));
  return reached.map((visitors, i) => ({
    step: i + 1,
    visitors,
    conversion_from_first: pct(visitors, reached[0]),
    conversion_from_previous: pct(visitors, i === 0 ? reached[0] : reached[i - 1]),
  }));
}
