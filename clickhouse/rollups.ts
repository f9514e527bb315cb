/**
 * The report rollups and the aggregation that feeds each from raw events (clickhouse/feeder.ts runs
 * them over block ranges of `events`). A new rollup is a migration for its table plus one entry here.
 * Every rollup is an AggregatingMergeTree whose non-key columns are SimpleAggregateFunctions, so rows
 * fed in separate ranges merge into the same totals.
 */
export interface RollupFeed {
  table: string;
  /** SELECT list over events, in the table's column order. */
  columns: string;
  /** Row condition on events, if the rollup takes only some events. */
  where?: string;
  groupBy: string;
}

/** The session attributes every session rollup row carries (so session filters apply to rollups). */
export const ROLLUP_SESSION_ATTRIBUTES = [
  'entry_path', 'referrer', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'gad_campaign_id',
  'country', 'region', 'city', 'browser', 'os', 'device',
] as const;

// any() on the stored column types and one conversion per group when the rollup's column differs:
// converting every row first (any(toString(x))) cost a fifth of the feed.
const SESSION_ATTRIBUTES = ROLLUP_SESSION_ATTRIBUTES.map((c) => `any(${c}) AS ${c}`).join(', ');

const QUARTER = `toDateTime(toStartOfFifteenMinutes(ts), 'UTC') AS slice`;

export const ROLLUP_FEEDS: readonly RollupFeed[] = [
  {
    // One row per session per UTC quarter-hour in which it had events.
    table: 'session_slices',
    columns: `site_id, ${QUARTER}, session_id, is_bot, bot_kind,
    any(visitor_id) AS visitor_id, any(session_start) AS session_start,
    toUInt64(countIf(name = 'pageview')) AS pageviews, toUInt64(count()) AS events, ${SESSION_ATTRIBUTES}`,
    groupBy: 'site_id, slice, session_id, is_bot, bot_kind',
  },
  {
    // Pageviews per session, page and UTC quarter-hour.
    table: 'page_slices',
    columns: `site_id, ${QUARTER}, hostname, pathname, session_id, is_bot, bot_kind,
    any(visitor_id) AS visitor_id, any(session_start) AS session_start, toUInt64(count()) AS views, ${SESSION_ATTRIBUTES}`,
    where: `name = 'pageview'`,
    groupBy: 'site_id, slice, hostname, pathname, session_id, is_bot, bot_kind',
  },
  {
    // Whole sessions ordered by their start.
    table: 'session_totals',
    columns: `site_id, session_start, session_id,
    any(visitor_id) AS visitor_id, max(is_bot) AS is_bot, any(bot_kind) AS bot_kind,
    min(ts) AS first_ts, max(ts) AS last_ts,
    toUInt64(countIf(name = 'pageview')) AS pageviews, toUInt64(count()) AS events, ${SESSION_ATTRIBUTES}`,
    groupBy: 'site_id, session_start, session_id',
  },
  {
    // First event ever per visitor, and first human event (NULL for a crawler-only visitor).
    table: 'first_seen',
    columns: `site_id, visitor_id, min(ts) AS first_ts, minOrNullIf(ts, is_bot = 0) AS first_human_ts`,
    groupBy: 'site_id, visitor_id',
  },
];
