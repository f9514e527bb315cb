import type { Store } from '../clickhouse/store';
import { nowMs } from '../core/clock';
import { invalidRequest } from '../core/errors';
import type { Site } from '../core/domain';
import { isValidTimeZone } from '../core/time';
import { onMetaWrite } from '../clickhouse/meta';
import { GoalsRepo, type Goal } from '../model/goals';
import type { FilterNode, ReportQuery } from './ast';
import { traitsOf } from './registry/reports';
import type { PlanContext } from './planner';
import { leaves } from './registry/filters';
import type { ZoneCheck } from './params';
import { TABLES } from './lower/common';
import { SEARCH_TABLE } from './lower/search';
import { and, as, col, eq, fn, lit, param, scalar, select, table } from './sql/ast';
import { execute } from './execute';
import { localToUtc, parseDate } from './window/zoned';

/**
 * What the planner needs from outside the request: now, the organisation's retention, the site's
 * goal rules (read fresh: adding a rule changes past windows) and, for `period=all`, the site's
 * earliest event. Also which zones ClickHouse knows, so a zone only Node knows is a 400, not a 500.
 */
const zoneSets = new WeakMap<Store, Promise<Map<string, string>>>();

/** ClickHouse's zone names, keyed by their lower case. */
function clickhouseZones(store: Store): Promise<Map<string, string>> {
  let zones = zoneSets.get(store);
  if (!zones) {
    zones = execute<{ time_zone: string }>(store, select({ columns: [col('time_zone')], from: table('time_zones', { system: true }) }))
      .then((rows) => new Map(rows.map((r) => [r.time_zone.toLowerCase(), r.time_zone])));
    zones.catch(() => zoneSets.delete(store));
    zoneSets.set(store, zones);
  }
  return zones;
}

export async function zoneCheck(store: Store): Promise<ZoneCheck> {
  const known = await clickhouseZones(store);
  return (tz) => {
    if (!isValidTimeZone(tz)) return null;
    // Intl accepts any letter case; ClickHouse wants its own spelling (asia/kolkata is Asia/Kolkata,
    // where Intl's canonical name would be Asia/Calcutta).
    const spelled = known.get(tz.toLowerCase());
    if (spelled) return spelled;
    const canonical = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
    return known.get(canonical.toLowerCase()) ?? null;
  };
}

/**
 * A site's timezone as ClickHouse spells it (`europe/paris` is `Europe/Paris`), or a 400: a zone
 * stored as typed was accepted by Intl, which ignores case, and then failed every query of the site
 * that reads it in ClickHouse (the notes list answered 500). Undefined stays undefined.
 */
export async function siteZone(store: Store, tz: string | undefined, field = 'timezone'): Promise<string | undefined> {
  if (tz === undefined) return undefined;
  const known = (await zoneCheck(store))(tz);
  if (!known) throw invalidRequest(`${field}: "${tz.slice(0, 64)}" is not a known IANA timezone`);
  return known;
}

/**
 * The site's earliest event, or null when it has none (one of earliestDatum's sources). Read in two
 * bounded steps instead of a min over every event of the site (35 ms per 5 million events, so most
 * of a second on a large site, per request): the first day, read in the sort key's order (a granule
 * per part: `events` is ordered by site, then day), then the minimum within that day.
 */
async function earliestEvent(store: Store, siteId: string): Promise<number | null> {
  const site = eq(col('site_id'), param('UUID', siteId));
  const day = fn('toDate', col('ts'));
  const firstDay = select({
    columns: [day], from: table(TABLES.events), where: site,
    orderBy: [{ expr: col('site_id'), dir: 'ASC' }, { expr: day, dir: 'ASC' }], limit: lit(1),
  });
  const [row] = await execute<{ first: string | null }>(store, select({
    columns: [as(fn('toString', fn('minOrNull', col('ts'))), 'first')],
    from: table(TABLES.events),
    where: and(site, eq(day, scalar(firstDay))),
  }));
  return row?.first ? Date.parse(row.first.replace(' ', 'T') + 'Z') : null;
}

/**
 * The earliest value of `column` in a small per-site table (payments, search days), or null. Read
 * FINAL without tombstones, as the reports read them: a purged property's or account's rows (a
 * re-key, a re-sync) must not move where `all` starts.
 */
async function earliestIn(store: Store, siteId: string, tableName: string, column: string, tz: string): Promise<number | null> {
  const [row] = await execute<{ first: string | null }>(store, select({
    columns: [as(fn('toString', fn('minOrNull', col(column))), 'first')],
    from: table(tableName, { final: true }), where: and(eq(col('site_id'), param('UUID', siteId)), eq(col('is_deleted'), lit(0))),
  }));
  if (!row?.first) return null;
  return row.first.length === 10 ? localToUtc(parseDate(row.first), tz) : Date.parse(row.first.replace(' ', 'T') + 'Z');
}

/**
 * Where `period=all` starts: the site's earliest datum, its first event or, when earlier, its first
 * imported payment or search-console day. A shop whose Stripe or console history predates the
 * tracker would otherwise see less revenue for `all` than for `last7d`. A search day is a date: it
 * starts at that date's midnight in the window's zone (search windows read the dates they span in
 * their zone), not at 00:00 UTC, which in Los Angeles read as 16:00 the day before.
 */
export async function earliestDatum(store: Store, siteId: string, tz: string): Promise<number | null> {
  const found = await Promise.all([
    earliestEvent(store, siteId),
    earliestIn(store, siteId, TABLES.payments, 'paid_at', tz),
    earliestIn(store, siteId, SEARCH_TABLE, 'date', tz),
  ]);
  const known = found.filter((ms): ms is number => ms !== null);
  return known.length ? Math.min(...known) : null;
}

/**
 * Goal rules per site, cached only in embedded mode: there one process makes every write, and every
 * goal write goes through MetaTable, which awaits onMetaWrite listeners before it returns, so the
 * cache is empty before a POST /goals answers. With a ClickHouse server other processes write too,
 * so rules are read fresh on every report (a FINAL query costs little there).
 */
const goalCache = new Map<string, Promise<Goal[]>>();
onMetaWrite((change) => {
  if (change.table === 'goals') goalCache.clear();
});

export function siteGoals(store: Store, siteId: string): Promise<Goal[]> {
  if (!store.embedded) return new GoalsRepo(store).list(siteId);
  const key = `${store.database}\u0000${siteId}`;
  let hit = goalCache.get(key);
  if (!hit) {
    hit = new GoalsRepo(store).list(siteId);
    hit.catch(() => goalCache.delete(key));
    if (goalCache.size >= 10_000) goalCache.clear();
    goalCache.set(key, hit);
  }
  return hit;
}

/** Whether a filter names a goal (`filter_goal`): its completions are the goal's rules. */
const namesGoal = (node: FilterNode | null) => leaves(node).some((l) => l.kind === 'goal' || (l.kind === 'cond' && l.filter === 'goal'));

export async function planContext(store: Store, site: Site, retentionDays: number, q: ReportQuery): Promise<PlanContext> {
  const needsEarliest = q.window.kind === 'period' && q.window.period === 'all';
  // A report that counts no goals still reads the rules when a filter names a goal: without them a
  // page goal's name would be read as an event name, and crawlers send no events (ai/series read 0).
  const [goals, earliest] = await Promise.all([
    traitsOf(q.report).goals || namesGoal(q.filters) ? siteGoals(store, site.id) : Promise.resolve([]),
    needsEarliest ? earliestDatum(store, site.id, q.tz) : Promise.resolve(null),
  ]);
  // A Goal is a GoalRule (the planner reads only the rule's fields): no per-request copy.
  return { now: nowMs(), retentionDays, earliestDatum: earliest, goals };
}
