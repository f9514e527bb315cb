import { rollupFeeder } from '../../clickhouse/feeder';
import type { Store } from '../../clickhouse/store';
import { nowCh } from '../../clickhouse/meta';
import { nowMs } from '../../core/clock';
import { shuttingDown } from '../../core/errors';
import { DAY_MS } from '../../core/time';
import type { SiteRef } from '../event';
import { acquisition, bots, BOT_SHARE, clients, HOURS, PATH_COUNT, places, RETURNING_VISITOR_RATIO, TOP_PATHS, type Table } from './profile';

/**
 * `tally seed`: realistic synthetic traffic generated inside ClickHouse by one INSERT ... SELECT over
 * numbers(), so ten million events take seconds, not a round trip per row. Every random draw is a
 * hash of (seed, session, event, draw number): the same --seed at the same moment gives the same traffic.
 * Visitor and session ids also hash the moment of seeding, so a second run (even with the same seed)
 * adds new visitors instead of doubling every event of the first run's sessions. Shapes: Zipf-like
 * path popularity, geometric session lengths (about 43% bounces), a working-hours curve in the
 * site's timezone with quieter weekends,
 * returning visitors, the acquisition/country/client mixes of profile.ts, 8% bot sessions and goals
 * (Signup, Purchase with a value, outbound clicks, downloads).
 */
export interface SeedOptions {
  events: number;
  days: number;
  seed: number;
  /** Sessions per insert (tests make it small); SESSIONS_PER_INSERT otherwise. */
  sessionsPerInsert?: number;
  /**
   * The server is shutting down: the seed stops before its next insert, answered 503 shutting_down
   * with how many events were stored (each insert is a whole number of sessions).
   */
  signal?: AbortSignal;
}

const MEAN_EVENTS_PER_SESSION = 2.3; // a little under the profile's ~2.43 so numbers() never runs short

/** Uniform [0, 1) from a hash: `key` is the SQL tuple of what the draw depends on. */
const u = (key: string, k: number) => `(cityHash64({seed:UInt64}, ${key}, ${k}) % 1000000) / 1000000.0`;
/**
 * Weighted pick as a 1-based row index. TRAP: arrayFirstIndex with a lambda over a constant array
 * replicates the array for every row (it made seeding 5x slower); a 4096-slot lookup table built in
 * TypeScript turns the pick into one arrayElement.
 */
const LUT_SIZE = 4096;
const pick = (name: string, draw: string) => `{${name}_lut:Array(UInt16)}[toUInt32(floor(${draw} * ${LUT_SIZE})) + 1]`;
const col = (name: string, column: string, index: string) => `{${name}_${column}:Array(String)}[${index}]`;

function lookupTable(cumulative: number[]): number[] {
  return Array.from({ length: LUT_SIZE }, (_, i) => {
    const at = (i + 0.5) / LUT_SIZE;
    return cumulative.findIndex((c) => c >= at) + 1;
  });
}

function tableParams(name: string, t: Table): Record<string, unknown> {
  const out: Record<string, unknown> = { [`${name}_lut`]: lookupTable(t.cumulative) };
  for (const [k, v] of Object.entries(t.columns)) out[`${name}_${k}`] = v;
  return out;
}

/** Path rank by a log-uniform draw (density ~ 1/rank, Zipf with s = 1) for event `j` of session n. */
const rankAt = (j: string) =>
  `least({path_count:UInt32} - 1, toUInt32(floor(exp(${u(`n, toUInt32(${j})`, 11)} * log({path_count:UInt32} + 1)))) - 1)`;
const pathOf = (rank: string) =>
  `if(${rank} < 10, {top_paths:Array(String)}[${rank} + 1], concat({tails:Array(String)}[${rank} % 3 + 1], 'item-', toString(${rank})))`;

const GOALS = `multiIf(s_bot, 0, ${u('n', 10)} < 0.04, 1, ${u('n', 10)} < 0.055, 2, ${u('n', 10)} < 0.105, 3, ${u('n', 10)} < 0.125, 4, 0)`;

/**
 * The session's local calendar day: up to `days` back from today, uniform, except that one in four
 * weekend sessions moves to a weekday of its week (Monday to Friday alike: `BACK` days earlier, or
 * 7 - BACK later at the window's old end), so a weekend day carries about 70% of a weekday's
 * traffic, as business sites see. Drawn from the session number only.
 */
const AGE = `toUInt32(floor(${u('n', 6)} * {days:UInt32}))`;
const TODAY = `toDate({now:DateTime64(3, 'UTC')}, {tz:String})`;
const BACK = `(toDayOfWeek(${TODAY} - ${AGE}) - 5 + toUInt32(floor(${u('n', 14)} * 5)))`;
const DAY = `(${TODAY} - multiIf(
      toDayOfWeek(${TODAY} - ${AGE}) < 6 OR ${u('n', 13)} >= 0.25, ${AGE},
      ${AGE} + ${BACK} < {days:UInt32}, ${AGE} + ${BACK},
      ${AGE} + ${BACK} >= 7, ${AGE} + ${BACK} - 7,
      ${AGE}))`;

/**
 * One row per session. A session that would not have ended by now (its last event, a goal included,
 * is at s_start + s_pages * s_step) moves back to the same time of an earlier day drawn evenly from
 * the window: no event lies in the future, the last hour still holds the sessions that ended in it
 * (a fresh seed shows visitors online), and the rest of today's traffic spreads over every day.
 * Moved all to yesterday, it made a spike there (a seed just after midnight nearly doubled it).
 */
function sessionsSql(source: string): string {
  const client = `if(s_bot, ${pick('bot', u('vn', 5))}, ${pick('client', u('vn', 5))})`;
  // The hour curve is the site's local day (a New York site peaks at New York's midday, not UTC's).
  const start = `toInt64(toUnixTimestamp(toDateTime(${DAY}, {tz:String}))) * 1000
      + (${pick('hour', u('n', 7))} - 1) * 3600000 + toInt64(floor(${u('n', 8)} * 3600000))`;
  return `
    SELECT n, vn, s_bot, s_acq, s_place, s_client, s_goal, s_pages, s_step,
      if(s_start0 + s_pages * s_step > toUnixTimestamp64Milli({now:DateTime64(3, 'UTC')}),
         s_start0 - 86400000 * toInt64(1 + floor(${u('n', 15)} * greatest({days:UInt32} - 1, 1))), s_start0) AS s_start
    FROM (
      SELECT number AS n,
        if(${u('n', 2)} < ${BOT_SHARE}, toUInt64(n % 97) + 1000000000000, toUInt64(floor(pow(${u('n', 1)}, 1.6) * {visitors:UInt64}))) AS vn,
        ${u('n', 2)} < ${BOT_SHARE} AS s_bot,
        ${pick('acq', u('n', 3))} AS s_acq,
        ${pick('place', u('vn', 4))} AS s_place,
        ${client} AS s_client,
        ${GOALS} AS s_goal,
        toUInt32(if(s_bot, 1 + floor(${u('n', 9)} * 3), least(15, 1 + floor(-log(greatest(${u('n', 9)}, 0.000001)) * 1.8)))) AS s_pages,
        toInt64(15000 + floor(${u('n', 12)} * 105000)) AS s_step,
        ${start} AS s_start0
      FROM ${source}
    )`;
}

const ACQ_COLUMNS = ['referrer', 'referrer_source', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'gad_campaign_id', 'gclid'];
const CLIENT_COLUMNS = ['browser', 'browser_version', 'os', 'os_version', 'device'];

function insertSql(store: Store): string {
  const acq = ACQ_COLUMNS.map((c) => (c === 'channel' ? `if(s_bot, 'Direct', ${col('acq', c, 's_acq')})` : `if(s_bot, '', ${col('acq', c, 's_acq')})`));
  const cl = (c: string) => `if(s_bot, ${col('bot', c, 's_client')}, ${col('client', c, 's_client')})`;
  const isGoal = 'j = s_pages';
  return `
INSERT INTO ${store.table('events')} (site_id, ts, name, event_id, visitor_id, session_id, session_start, is_bot, bot_kind,
  crawler_name, crawler_operator, hostname, pathname, link, value_cents, props, entry_path, entry_hostname,
  ${ACQ_COLUMNS.join(', ')}, utm_content, country, region, city, ${CLIENT_COLUMNS.join(', ')})
SELECT {site:UUID}, fromUnixTimestamp64Milli(s_start + j * s_step, 'UTC'),
  if(${isGoal}, {goal_names:Array(String)}[s_goal], 'pageview'),
  generateUUIDv4(),
  cityHash64({site:UUID}, {seed:UInt64}, {now:DateTime64(3, 'UTC')}, 'visitor', vn), cityHash64({site:UUID}, {seed:UInt64}, {now:DateTime64(3, 'UTC')}, 'session', n),
  fromUnixTimestamp64Milli(s_start, 'UTC'), toUInt8(s_bot),
  if(s_bot, ${col('bot', 'bot_kind', 's_client')}, ''), if(s_bot, ${col('bot', 'crawler_name', 's_client')}, ''),
  if(s_bot, ${col('bot', 'crawler_operator', 's_client')}, ''),
  {domain:String}, ${pathOf(rankAt('least(j, s_pages - 1)'))},
  multiIf(${isGoal} AND s_goal = 3, {exit_link:String}, ${isGoal} AND s_goal = 4, {download_link:String}, ''),
  if(${isGoal} AND s_goal = 2, {prices:Array(Int64)}[n % 3 + 1], 0),
  if(${isGoal} AND s_goal = 2, map('plan', {plans:Array(String)}[n % 3 + 1]), CAST(map(), 'Map(String, String)')),
  ${pathOf(rankAt('0'))}, {domain:String},
  ${acq.join(', ')}, '',
  ${col('place', 'country', 's_place')}, ${col('place', 'region', 's_place')}, ${col('place', 'city', 's_place')},
  ${CLIENT_COLUMNS.map(cl).join(', ')}
FROM (${sessionsSql('numbers_mt({first:UInt64}, {count:UInt64})')})
ARRAY JOIN range(s_pages + if(s_goal > 0, 1, 0)) AS j
WHERE NOT (n = {sessions:UInt64} - 1 AND j >= {last_events:UInt32})`;
}

const eventsOf = 'toUInt64(s_pages + if(s_goal > 0, 1, 0))';

/**
 * How many sessions make exactly `events` events, and how many events of the last one to keep. A
 * cheap first pass over the session draws only (one array of counts), so the insert can then run on
 * numbers_mt (both cores) and still be deterministic: a LIMIT over a parallel stream would keep an
 * arbitrary subset.
 */
async function sessionCut(store: Store, params: Record<string, unknown>, events: number, chunk: number): Promise<SessionCut> {
  const [r] = await store.query<{ idx: number; before: number; marks: (number | string)[] }>(
    `SELECT arrayFirstIndex(c -> c >= {limit:UInt64}, cum) AS idx, if(idx > 1, cum[idx - 1], 0) AS before,
       arrayMap(k -> cum[k], range(toUInt64({chunk:UInt64}), toUInt64(idx), toUInt64({chunk:UInt64}))) AS marks
     FROM (SELECT arrayCumSum(groupArray(${eventsOf})) AS cum FROM (${sessionsSql('numbers({sessions:UInt64})')}))`,
    { ...params, chunk },
    { max_threads: 1 },
  );
  if (!r || r.idx === 0) throw new Error('seed: the session draw produced too few events');
  return { sessions: r.idx, lastEvents: events - r.before, eventsBefore: r.marks.map(Number) };
}

/** How the seed's sessions make exactly its events; eventsBefore[k]: events of sessions below (k + 1) * chunk. */
interface SessionCut {
  sessions: number;
  lastEvents: number;
  eventsBefore: number[];
}

/** Sessions per insert (about 600,000 events, 2-3 s here), so a shutdown waits at most one (see `signal`). */
const SESSIONS_PER_INSERT = 250_000;

export async function seedEvents(store: Store, site: SiteRef & { timezone?: string }, opts: SeedOptions): Promise<{ inserted: number }> {
  const sessions = Math.ceil((opts.events / MEAN_EVENTS_PER_SESSION) * 1.1) + 10;
  const params = {
    site: site.id, domain: site.domain, seed: String(opts.seed), sessions: String(sessions), limit: String(opts.events),
    visitors: String(Math.max(1, Math.round(sessions * RETURNING_VISITOR_RATIO))), days: opts.days,
    now: nowCh(), tz: site.timezone ?? 'UTC', path_count: PATH_COUNT, top_paths: TOP_PATHS, tails: ['/blog/', '/docs/', '/products/'],
    goal_names: ['Signup', 'Purchase', 'exit_link', 'file_download'], prices: [1900, 4900, 9900], plans: ['starter', 'pro', 'business'],
    exit_link: 'https://github.com/tally-analytics/tally', download_link: `https://${site.domain}/files/whitepaper.pdf`,
    ...tableParams('acq', acquisition), ...tableParams('place', places), ...tableParams('client', clients),
    ...tableParams('bot', bots), ...tableParams('hour', HOURS),
  };
  const chunk = opts.sessionsPerInsert ?? SESSIONS_PER_INSERT;
  const cut = await sessionCut(store, params, opts.events, chunk);
  const feeder = rollupFeeder(store);
  // Sessions start up to `days` (plus a day, see sessionsSql) back and last minutes: a generous span.
  const span = { siteIds: [site.id], minTs: nowMs() - (opts.days + 2) * DAY_MS, maxTs: nowMs() + DAY_MS };
  let stored = 0;
  for (let first = 0; first < cut.sessions; first += chunk) {
    if (opts.signal?.aborted) {
      await feeder.catchUp();
      throw shuttingDown(`the seed stopped after ${stored} of ${opts.events} events (whole sessions); seed the rest once the server is back`);
    }
    const count = Math.min(chunk, cut.sessions - first);
    await feeder.write(span, () => store.command(insertSql(store), {
      ...params, sessions: String(cut.sessions), last_events: cut.lastEvents, first: String(first), count: String(count),
    }, { max_threads: 2, max_insert_threads: '2' }));
    stored = cut.eventsBefore[first / chunk] ?? opts.events;
  }
  await feeder.catchUp();
  // Exact without counting the site's events (a full scan before and after): the insert keeps every
  // event of the cut's first `sessions - 1` sessions plus `lastEvents` of the last, which sum to
  // opts.events by construction, and it draws the same per-session event counts as sessionCut (they
  // depend on the session number and the seed only).
  return { inserted: opts.events };
}

