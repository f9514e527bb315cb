import { DAY_MS } from '../core/time';
import { isoToCh } from './meta';
import type { Params, Store } from './store';

/**
 * What an organisation's retention removes, table by table (docs/OPERATIONS.md "Retention purge").
 * Each step counts the rows it would remove first and issues its mutation only when there are any,
 * so a daily run over a site with nothing old issues no mutation at all.
 *
 * Every condition reads the bound parameters `sites` (the sites of organisations sharing one cutoff),
 * `cutoff` (DateTime64, UTC) and `cutoff_day` (its UTC date).
 */

/**
 * The cutoff: the start of the UTC day of `now - retentionDays`, minus one more day. Reports clamp
 * windows at `now - retentionDays` (query/window/resolve.ts clampToRetention), an instant always at
 * least a day after the cutoff, so a window retention allows never reads a row this purge removes,
 * whatever the window's tz (zones are at most 14 h from UTC) and even for a report that started a
 * little before the purge.
 */
export function retentionCutoff(nowMs: number, retentionDays: number): number {
  const edge = nowMs - retentionDays * DAY_MS;
  return Math.floor(edge / DAY_MS) * DAY_MS - DAY_MS;
}

/**
 * Where a first_seen row's first-event times go once they are older than the cutoff (the visitor is
 * still seen after it): 1970-01-01. Any instant before every window retention allows gives the same
 * new-vs-returning answer; the real one would outlive retention.
 * A constant, written into the statement: as a bound parameter the mutation stored it as the text '0'
 * and its background run could not read that back as a DateTime64.
 */
const UNDATED_SQL = `toDateTime64(0, 3, 'UTC')`;

export interface PurgeStep {
  /** What the report and the log call it: the table, or `first_seen_undated` for the rewrite. */
  name: string;
  table: string;
  /** The rows to remove (or rewrite) among the sites' rows; `site_id IN {sites}` is added. */
  where: (store: Store) => string;
  /** Rewrite instead of delete: the SET list of an ALTER TABLE ... UPDATE. */
  update?: string;
}

const CUTOFF = `{cutoff:DateTime64(3, 'UTC')}`;
const SITES = '{sites:Array(UUID)}';

/**
 * In order: events first, so no old event can be fed into a rollup after the rollups were purged
 * (the purge deletes every cutoff group's events, then catches the feeder up once), then the rollups,
 * then the other per-site data.
 */
export const PURGE_STEPS: readonly PurgeStep[] = [
  { name: 'events', table: 'events', where: () => `ts < ${CUTOFF}` },
  { name: 'session_slices', table: 'session_slices', where: () => `slice < ${CUTOFF}` },
  { name: 'page_slices', table: 'page_slices', where: () => `slice < ${CUTOFF}` },
  {
    // A session that began before the cutoff and went on after it keeps every row: its whole-session
    // figures (bounce, duration) are read by windows it reaches into, and its rows are partial sums
    // until merged, so dropping one would change them. It goes with a later purge, once it ended
    // before that purge's cutoff.
    name: 'session_totals',
    table: 'session_totals',
    where: (s) => `session_start < ${CUTOFF} AND (site_id, session_id) NOT IN (
      SELECT site_id, session_id FROM ${s.table('session_totals')}
      WHERE site_id IN ${SITES} AND session_start < ${CUTOFF} AND last_ts >= ${CUTOFF})`,
  },
  {
    // Visitors first seen before the cutoff and not seen since are forgotten. One still seen after it
    // keeps its row (else its next visit would make it new again); its times are undated below. The
    // inner set is bounded by the visitors first seen before the cutoff, not by every visitor since.
    name: 'first_seen',
    table: 'first_seen',
    where: (s) => `first_ts < ${CUTOFF} AND (site_id, visitor_id) NOT IN (
      SELECT site_id, visitor_id FROM ${s.table('events')}
      WHERE site_id IN ${SITES} AND ts >= ${CUTOFF} AND (site_id, visitor_id) IN (
        SELECT site_id, visitor_id FROM ${s.table('first_seen')} WHERE site_id IN ${SITES} AND first_ts < ${CUTOFF}))`,
  },
  {
    // first_ts / first_human_ts are min()s: a row's time older than the cutoff becomes UNDATED, so no
    // first-visit time outlives retention. Rows undated already are left alone (no daily rewrite).
    name: 'first_seen_undated',
    table: 'first_seen',
    where: () => `(first_ts < ${CUTOFF} AND first_ts > ${UNDATED_SQL})
      OR (first_human_ts < ${CUTOFF} AND first_human_ts > ${UNDATED_SQL})`,
    update: `first_ts = if(first_ts < ${CUTOFF}, ${UNDATED_SQL}, first_ts),
      first_human_ts = if(first_human_ts < ${CUTOFF}, ${UNDATED_SQL}, first_human_ts)`,
  },
  { name: 'payments', table: 'payments', where: () => `paid_at < ${CUTOFF}` },
  { name: 'lifecycle_events', table: 'lifecycle_events', where: () => `occurred_at < ${CUTOFF}` },
  // Console days are dates; the day before the cutoff's date is still a day before any allowed window's.
  { name: 'search_console', table: 'search_console', where: () => `date < {cutoff_day:Date}` },
  // A firing carries the figure it measured (reading it needs analytics:read): analytics, not a note.
  { name: 'alert_firings', table: 'alert_firings', where: () => `fired_at < ${CUTOFF}` },
  // Each mail outcome goes with its firing (recorded after it, so its time is never earlier).
  { name: 'alert_deliveries', table: 'alert_deliveries', where: () => `at < ${CUTOFF}` },
];

/** The rows each site has to purge in this step: site id -> rows as stored (partial rows, versions). */
export async function countStep(store: Store, step: PurgeStep, params: Params): Promise<Map<string, number>> {
  const rows = await store.query<{ site: string; n: number }>(
    `SELECT toString(site_id) AS site, count() AS n FROM ${store.table(step.table)}
     WHERE site_id IN ${SITES} AND (${step.where(store)}) GROUP BY site_id`,
    params,
  );
  return new Map(rows.map((r) => [r.site, Number(r.n)]));
}

/**
 * Deletes the step's rows with a lightweight DELETE (synchronous by default: the rows are gone when it
 * returns), or rewrites them with ALTER TABLE ... UPDATE, told to wait for the mutation.
 */
export async function runStep(store: Store, step: PurgeStep, params: Params): Promise<void> {
  const where = `site_id IN ${SITES} AND (${step.where(store)})`;
  const sql = step.update
    ? `ALTER TABLE ${store.table(step.table)} UPDATE ${step.update} WHERE ${where} SETTINGS mutations_sync = 2`
    : `DELETE FROM ${store.table(step.table)} WHERE ${where}`;
  await store.command(sql, params);
}

export function stepParams(siteIds: readonly string[], cutoffMs: number): Params {
  const cutoff = new Date(cutoffMs);
  return { sites: [...siteIds], cutoff: isoToCh(cutoff), cutoff_day: cutoff.toISOString().slice(0, 10) };
}

/**
 * Freeing the disk. A lightweight DELETE only masks rows: their bytes stay in the parts until those
 * parts merge, and an old month's parts may never merge again (events merges ten parts at a time).
 * After a run's deletes, each partition of a purged table that holds masked rows is compacted when the
 * masked rows are at least COMPACT_SHARE of the rows it stores, or it has no visible row left:
 * - `APPLY DELETED MASK IN PARTITION ID`: rewrites that partition's masked parts without their masked
 *   rows (a mutation: parts inserted meanwhile are not touched);
 * - `DROP PARTITION ID` instead, when nothing in it is visible and its whole month lies before every
 *   organisation's cutoff: a row stored there between the count and the drop could only be one the
 *   next purge removes anyway. Metadata only, nothing rewritten.
 * The share bounds the cost: a partition is rewritten only once a third of it is masked, so a month
 * purged day by day is rewritten a few times (geometrically smaller each time, at most about twice
 * its size in all), not daily; a partition below the share keeps its masked rows until it merges.
 */
export const COMPACT_SHARE = 1 / 3;

/** The tables the purge deletes from, each once (first_seen has two steps). */
export const PURGED_TABLES: readonly string[] = [...new Set(PURGE_STEPS.map((s) => s.table))];

export interface MaskedPartition {
  table: string;
  /** system.parts partition_id: `YYYYMM` for the monthly tables, `all` for the unpartitioned. */
  partition: string;
  /** Rows its active parts store, masked ones included. */
  stored: number;
  /** Rows queries see (count() skips masked rows). */
  visible: number;
  /** The table is partitioned by toYYYYMM(<column>): `partition` names a UTC month. */
  monthly: boolean;
}

export type Compaction = 'mask' | 'drop';

/** A monthly partition id, strictly: six digits, a real month. */
const MONTH_ID = /^(\d{4})(0[1-9]|1[0-2])$/;

/** The first instant after the month a monthly partition id names (epoch ms), or null if it names none. */
export function monthEnd(partition: string): number | null {
  const m = MONTH_ID.exec(partition);
  return m ? Date.UTC(Number(m[1]), Number(m[2]), 1) : null;
}

/**
 * What to do with a partition holding masked rows: drop it (nothing visible, a month wholly before
 * `dropBefore`, the earliest cutoff of every organisation), apply its mask (masked rows at least
 * COMPACT_SHARE of it, or nothing visible), or leave it (null) until its parts merge.
 */
export function compactionFor(p: MaskedPartition, dropBefore: number | null): Compaction | null {
  const masked = p.stored - p.visible;
  if (masked <= 0) return null;
  if (p.visible === 0) {
    const end = p.monthly ? monthEnd(p.partition) : null;
    return end !== null && dropBefore !== null && end <= dropBefore ? 'drop' : 'mask';
  }
  return masked >= p.stored * COMPACT_SHARE ? 'mask' : null;
}

/**
 * The partitions of the purged tables that hold masked rows, with their stored and visible rows. Stored
 * rows come from system.parts; visible rows from one count per table over those partitions only (it
 * reads the one-byte mask column of their parts). Local table names: the purge refuses cluster mode.
 */
export async function maskedPartitions(store: Store): Promise<MaskedPartition[]> {
  const parts = await store.query<{ table: string; partition: string; stored: number; key: string }>(
    `SELECT p.table AS table, p.partition_id AS partition, sum(p.rows) AS stored, any(t.partition_key) AS key
     FROM system.parts AS p INNER JOIN system.tables AS t ON t.database = p.database AND t.name = p.table
     WHERE p.database = {db:String} AND p.table IN {tables:Array(String)} AND p.active
     GROUP BY p.table, p.partition_id HAVING max(p.has_lightweight_delete) = 1 ORDER BY table, partition`,
    { db: store.database, tables: [...PURGED_TABLES] },
  );
  const out: MaskedPartition[] = [];
  for (const table of PURGED_TABLES) {
    const mine = parts.filter((p) => p.table === table);
    if (!mine.length) continue;
    const visible = await store.query<{ partition: string; n: number }>(
      `SELECT _partition_id AS partition, count() AS n FROM ${store.table(table)}
       WHERE _partition_id IN {ids:Array(String)} GROUP BY partition`,
      { ids: mine.map((p) => p.partition) },
    );
    const seen = new Map(visible.map((v) => [v.partition, Number(v.n)]));
    for (const p of mine) {
      out.push({
        table, partition: p.partition, stored: Number(p.stored), visible: seen.get(p.partition) ?? 0,
        monthly: /^toYYYYMM\(\w+\)$/.test(p.key),
      });
    }
  }
  return out;
}

/**
 * Apply the mask of, or drop, one partition; waits until done. The id comes from system.parts, and is
 * still bound (`PARTITION ID {p:String}`) and checked against its table's shape.
 */
export async function compactPartition(store: Store, p: MaskedPartition, how: Compaction): Promise<void> {
  if (!(p.monthly ? MONTH_ID.test(p.partition) : p.partition === 'all')) {
    throw new Error(`retention purge: unexpected partition id ${JSON.stringify(p.partition)} of ${p.table}`);
  }
  if (how === 'drop' && !p.monthly) throw new Error(`retention purge: ${p.table} is not partitioned by month`);
  const sql = how === 'drop'
    ? `ALTER TABLE ${store.table(p.table)} DROP PARTITION ID {p:String}`
    : `ALTER TABLE ${store.table(p.table)} APPLY DELETED MASK IN PARTITION ID {p:String} SETTINGS mutations_sync = 2`;
  await store.command(sql, { p: p.partition });
}
