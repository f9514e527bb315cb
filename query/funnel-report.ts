import type { Params, Store } from '../clickhouse/store';
import { isoToCh } from '../clickhouse/meta';
import { globMatch, globToRegex } from '../core/glob';
import type { FunnelWindow, MatchOp, Step } from '../model/funnels';
import { BUILTIN_EVENTS, type Goal } from '../model/goals';
import { earliestEvent, siteGoals } from './context';

/**
 * The funnel report: per step, the visitors who reached it (in order, each step within the funnel's
 * window of the first), with conversion from the first and from the previous step. One ClickHouse
 * `windowFunnel` pass over the site's events in [from, to), plus its succeeded payments when a step
 * asks for one. Every value is a bound parameter; the window is a literal from FUNNEL_WINDOW_MS.
 */

// TRAP: windowFunnel needs its window as a literal (not a parameter), so it is only ever read from
// this table, keyed by the five allowed values, in the unit of the funnel key (see funnelSql).
const FUNNEL_WINDOW_MS = {
  3600: 3_600_000, 86400: 86_400_000, 604800: 604_800_000, 2592000: 2_592_000_000, 7776000: 7_776_000_000,
} as const satisfies Record<FunnelWindow, number>;

/**
 * TRAP: windowFunnel adds one entry per condition a row satisfies, all at the row's timestamp, and
 * chains them; so one page view matching steps 1 and 2 (a repeated or overlapping step) reached
 * step 2 by itself. Rows are therefore exploded into one entry per matched step, on a key that
 * orders entries of the same millisecond: events by their lowest matched step, then within one
 * event the higher step first, so an event can never follow itself. 16 slots hold the 10 steps.
 */
const KEY_SLOTS = 16;
const KEY_SCALE = KEY_SLOTS * KEY_SLOTS;
// The window in key units; the extra slots keep its last millisecond inside it, as before.
const windowLiteral = (w: FunnelWindow) => String(FUNNEL_WINDOW_MS[w] * KEY_SCALE + (KEY_SCALE - 1));

/** One entry per match operator: its SQL over a column and a bound value, and the same test in JS. */
const MATCHERS = {
  equals: { sql: (col: string, p: string) => `${col} = {${p}:String}`, js: (v: string, x: string) => x === v, value: (v: string) => v },
  starts_with: { sql: (col: string, p: string) => `startsWith(${col}, {${p}:String})`, js: (v: string, x: string) => x.startsWith(v), value: (v: string) => v },
  ends_with: { sql: (col: string, p: string) => `endsWith(${col}, {${p}:String})`, js: (v: string, x: string) => x.endsWith(v), value: (v: string) => v },
  contains: { sql: (col: string, p: string) => `position(${col}, {${p}:String}) > 0`, js: (v: string, x: string) => x.includes(v), value: (v: string) => v },
  glob: { sql: (col: string, p: string) => `match(${col}, {${p}:String})`, js: (v: string, x: string) => globMatch(v, x), value: globToRegex },
} as const satisfies Record<MatchOp, { sql(col: string, p: string): string; js(v: string, x: string): boolean; value(v: string): string }>;

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

/** Build the condition of each step; params collects the bound values. */
export function stepConditions(steps: Step[], goals: DefinedGoal[], params: Params): string[] {
  let n = 0;
  const bind = (v: string) => {
    const name = `v${n++}`;
    params[name] = v;
    return name;
  };
  return steps.map((step) => {
    if (step.kind === 'payment') return 'is_payment = 1';
    const m = MATCHERS[step.match];
    if (step.kind === 'view') return `(is_payment = 0 AND name = 'pageview' AND ${m.sql('pathname', bind(m.value(step.value)))})`;
    // A goal step: sent goals by event name, and defined goals whose *goal* name matches (a page rule
    // by its path glob, an event goal by its event name).
    const sent = `(is_payment = 0 AND name NOT IN ('${BUILTIN_EVENTS.join("', '")}') AND ${m.sql('name', bind(m.value(step.value)))})`;
    const defined = goals
      .filter((g) => m.js(step.value, g.name))
      .map((g) =>
        g.kind === 'page'
          ? `(is_payment = 0 AND name = 'pageview' AND match(pathname, {${bind(globToRegex(g.path_pattern ?? ''))}:String}))`
          : `(is_payment = 0 AND name = {${bind(g.event_name ?? '')}:String})`,
      );
    return `(${[sent, ...defined].join(' OR ')})`;
  });
}

function funnelSql(store: Store, input: FunnelReportInput, conditions: string[]): string {
  const bots = input.includeBots ? '' : 'AND is_bot = 0';
  const payments = input.steps.some((s) => s.kind === 'payment')
    ? `UNION ALL
       SELECT visitor_id, toUInt64(toUnixTimestamp64Milli(paid_at)) AS t, '' AS name, '' AS pathname, 1 AS is_payment
       FROM ${store.table('payments')} FINAL
       WHERE site_id = {site:UUID} AND is_deleted = 0 AND status = 'succeeded' AND paid_at >= {from:DateTime64(3)} AND paid_at < {to:DateTime64(3)}`
    : '';
  const levels = conditions.map((_c, i) => `step = ${i}`).join(', ');
  return `
    SELECT level, toUInt64(count()) AS visitors FROM (
      SELECT visitor_id, windowFunnel(${windowLiteral(input.windowSeconds)})(key, ${levels}) AS level
      FROM (
        SELECT visitor_id, arrayJoin(steps) AS step, toUInt64((t * ${KEY_SLOTS} + steps[1]) * ${KEY_SLOTS} + (${KEY_SLOTS - 1} - step)) AS key
        FROM (
          SELECT visitor_id, t, arrayFilter((i, hit) -> hit = 1, range(${conditions.length}), [${conditions.join(', ')}]) AS steps
          FROM (
            SELECT visitor_id, toUInt64(toUnixTimestamp64Milli(ts)) AS t, toString(name) AS name, pathname, 0 AS is_payment
            FROM ${store.table('events')}
            WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)} ${bots}
            ${payments}
          )
        )
        WHERE notEmpty(steps)
      )
      GROUP BY visitor_id
    )
    WHERE level > 0
    GROUP BY level`;
}

const pct = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0);

export async function runFunnelReport(store: Store, input: FunnelReportInput): Promise<FunnelStepResult[]> {
  const params: Params = { site: input.siteId, from: isoToCh(new Date(input.fromMs)), to: isoToCh(new Date(input.toMs)) };
  const conditions = stepConditions(input.steps, input.goals, params);
  const rows = await store.query<{ level: number; visitors: number }>(funnelSql(store, input, conditions), params);
  // windowFunnel gives the deepest step each visitor reached; reaching step k means level >= k.
  const reached = input.steps.map((_s, i) => rows.filter((r) => r.level >= i + 1).reduce((a, r) => a + r.visitors, 0));
  return reached.map((visitors, i) => ({
    step: i + 1,
    visitors,
    conversion_from_first: pct(visitors, reached[0]),
    conversion_from_previous: pct(visitors, i === 0 ? reached[0] : reached[i - 1]),
  }));
}

/** The site's defined goals, read as the reports read them (cached where that is safe, see siteGoals). */
export const loadGoals = (store: Store, siteId: string): Promise<DefinedGoal[]> => siteGoals(store, siteId);

/** The site's earliest retained event, for `period=all`. */
export async function earliestEventMs(store: Store, siteId: string): Promise<number | undefined> {
  return (await earliestEvent(store, siteId)) ?? undefined;
}
