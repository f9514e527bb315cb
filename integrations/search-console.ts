import { auth, searchconsole, type searchconsole_v1 } from '@googleapis/searchconsole';
import type { Store } from '../clickhouse/store';
import { tombstone } from '../clickhouse/tombstones';
import { nextVersion } from '../core/ids';
import { pageFields } from '../ingest/enrich/url';
import type { IntegrationRepo, IntegrationRow } from '../model/integrations';
import { DAY_TOTAL, SEARCH_TABLE } from '../query/lower/search';
import { addDays, addMonths, dateInZone, formatDate, parseDate } from '../query/window/zoned';

/**
 * Google Search Console through its official client (`@googleapis/searchconsole`, the last major
 * that runs on Node 20), authenticated as a service account the site's owner added as a user of the
 * property. The console's days are Pacific dates; a day is imported whole (every page of its rows),
 * summed per (term, hostname, path) and written at one version, and the rows an earlier import of
 * that day held and this one does not are tombstoned: a day re-imported is replaced, never mixed.
 *
 * TALLY_GOOGLE_API_URL points the API and the OAuth token exchange at a Google-compatible server (the
 * tests' double); unset, the client talks to Google.
 */
export const SEARCH_SCOPE = 'https://www.googleapis.com/auth/webmasters.readonly';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** The API's largest page. */
export const PAGE_ROWS = 25_000;
/** How far back the console keeps data. */
export const RETENTION_MONTHS = 16;
const CONSOLE_TZ = 'America/Los_Angeles';

/** What a Search Console connection is made with, sealed as JSON in `credentials`. */
export interface SearchCredentials {
  property: string;
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/**
 * Node's own fetch for both the token exchange and the API: gaxios would otherwise load node-fetch
 * with a dynamic ESM import on first use, one more HTTP stack (and one Jest's VM cannot load).
 */
const HTTP = { fetchImplementation: fetch, timeout: 20_000 };

export function searchClient(c: SearchCredentials, apiUrl?: URL): searchconsole_v1.Searchconsole {
  const jwt = new auth.JWT({
    email: c.client_email, key: c.private_key, keyId: c.private_key_id, scopes: [SEARCH_SCOPE], transporterOptions: HTTP,
  });
  if (apiUrl) {
    // The token endpoint is fixed in the auth library; the assertion's audience stays Google's, as the
    // real endpoint checks it.
    const tokenUrl = new URL('token', apiUrl).href;
    jwt.transporter.interceptors.request.add({
      resolved: async (opts) => (String(opts.url).startsWith(GOOGLE_TOKEN_URL) ? { ...opts, url: new URL(tokenUrl) } : opts),
    });
  }
  return searchconsole({ version: 'v1', auth: jwt, rootUrl: apiUrl?.href, ...HTTP });
}

/** The console's date (Pacific) at `ms`. */
export const consoleDate = (ms: number): string => dateInZone(ms, CONSOLE_TZ);

/** `date` moved by whole days. */
export const shiftDate = (date: string, days: number): string => formatDate(addDays(parseDate(date), days));

/** The first day of the month RETENTION_MONTHS before `today`'s: older days the console no longer has. */
export const retentionStart = (today: string): string => formatDate(addMonths(parseDate(today), -RETENTION_MONTHS));

/** One (term, hostname, path) of a day, summed over the API's rows; or the day's property total (DAY_TOTAL). */
interface TermPage {
  term: string; hostname: string; path: string; clicks: number; impressions: number; position_sum: number;
}

/**
 * The property's figures per day from `first` to `last` (one request, grouped by date alone): the
 * console's own totals, which count anonymised queries and count a result once however many of the
 * property's URLs it showed. Days without impressions are absent; `firstIncomplete` is the first day
 * the console still collects.
 */
export interface DayTotals { byDay: Map<string, TermPage>; firstIncomplete?: string }

/**
 * Keeps the console's word on the first date it still collects (`partial` in the search reports) on
 * the connection, while its generation is current: from the import's first read and every refresh,
 * before the days are read again, so a report never pairs new rows with the old word.
 */
export function noteIncomplete(repo: IntegrationRepo, row: IntegrationRow, totals: DayTotals): Promise<unknown> {
  const incomplete = totals.firstIncomplete ?? '';
  if (row.incomplete_from === incomplete) return Promise.resolve();
  return repo.update(row.site_id, (stored) =>
    stored && stored.backfill_job === row.backfill_job && stored.incomplete_from !== incomplete ? { ...stored, incomplete_from: incomplete } : undefined);
}

export async function dayTotals(sc: searchconsole_v1.Searchconsole, property: string, first: string, last: string): Promise<DayTotals> {
  if (first > last) return { byDay: new Map() };
  const res = await sc.searchanalytics.query({
    siteUrl: property,
    requestBody: { startDate: first, endDate: last, dimensions: ['date'], rowLimit: PAGE_ROWS, dataState: 'all', type: 'web' },
  });
  const days = (res.data.rows ?? []).filter((r) => (r.impressions ?? 0) > 0);
  return {
    byDay: new Map(days.map((r) => [r.keys![0], { ...DAY_TOTAL, ...figures(r) }])),
    firstIncomplete: res.data.metadata?.firstIncompleteDate ?? undefined,
  };
}

/** Days with any impressions, newest first. */
export const daysWithData = (t: DayTotals): string[] => [...t.byDay.keys()].sort().reverse();

/**
 * `https://Shop.example/caf%C3%A9?x=1` -> shop.example and /café, as event paths are stored (the same
 * pageFields: decoded, so a term's page lines up with the page in the event reports and filters).
 */
function pageParts(page: string): { hostname: string; path: string } {
  try {
    const fields = pageFields(new URL(page));
    return { hostname: fields.hostname, path: fields.pathname };
  } catch {
    return { hostname: '', path: page };
  }
}

/** An API row's figures, the position as its summable part (the API's position is impression-weighted). */
function figures(r: searchconsole_v1.Schema$ApiDataRow) {
  const impressions = r.impressions ?? 0;
  return { clicks: r.clicks ?? 0, impressions, position_sum: (r.position ?? 0) * impressions };
}

/** Sum an API row (keys: date, query, page) into its table key: URLs that differ only in query or fragment are one path. */
function addRow(into: Map<string, TermPage>, r: searchconsole_v1.Schema$ApiDataRow): void {
  const [, term = '', page = ''] = r.keys ?? [];
  if (!term) return; // the console reports no empty query; the key is the day total's
  const { hostname, path } = pageParts(page);
  const key = JSON.stringify([term, hostname, path]);
  const sum = into.get(key) ?? { term, hostname, path, clicks: 0, impressions: 0, position_sum: 0 };
  const add = figures(r);
  sum.clicks += add.clicks;
  sum.impressions += add.impressions;
  sum.position_sum += add.position_sum;
  into.set(key, sum);
}

export interface DayImport {
  rows: number;
  requests: number;
  /** Store the day (replacing its older rows); the caller runs it in the site's turn. */
  write(): Promise<void>;
}

type Query = searchconsole_v1.Params$Resource$Searchanalytics$Query['requestBody'];

/** One request of a day's rows with fresh data included; whether the console still calls the day not final. */
async function askDay(sc: searchconsole_v1.Searchconsole, property: string, day: string, body: Query) {
  const res = await sc.searchanalytics.query({
    siteUrl: property, requestBody: { startDate: day, endDate: day, dataState: 'all', type: 'web', ...body },
  });
  const incomplete = res.data.metadata?.firstIncompleteDate;
  return { rows: res.data.rows ?? [], notFinal: !!incomplete && incomplete <= day };
}

/**
 * Read one day whole: its property total (from `totals`, read once for a range of days), then every
 * page of its (date, query, page) rows, final unless the console says data from that day on is still
 * being collected (`firstIncompleteDate`). `requests` counts the pages of term rows. Nothing is
 * stored until `write` is called.
 */
export async function readDay(
  sc: searchconsole_v1.Searchconsole, store: Store, siteId: string, property: string, day: string, totals: DayTotals,
): Promise<DayImport> {
  const version = nextVersion();
  const total = totals.byDay.get(day);
  const sums = new Map<string, TermPage>();
  let final = !(totals.firstIncomplete && totals.firstIncomplete <= day);
  let requests = 0;
  for (let startRow = 0; ; startRow += PAGE_ROWS) {
    const page = await askDay(sc, property, day, { dimensions: ['date', 'query', 'page'], rowLimit: PAGE_ROWS, startRow });
    requests++;
    if (page.notFinal) final = false;
    for (const r of page.rows) addRow(sums, r);
    if (page.rows.length < PAGE_ROWS) break;
  }
  const rows = [...sums.values(), ...(total ? [total] : [])]
    .map((sum) => ({ site_id: siteId, date: day, ...sum, is_final: final ? 1 : 0, version, is_deleted: 0 }));
  const write = async () => {
    if (rows.length) await store.insert(SEARCH_TABLE, rows);
    await clearRows(store, siteId, { day, before: version });
  };
  return { rows: sums.size, requests, write };
}

const COLUMNS = ['site_id', 'date', 'term', 'hostname', 'path', 'clicks', 'impressions', 'position_sum', 'is_final'];

/** Tombstones of the site's rows: of one day and older than the import that replaced it, or all (a re-sync). */
export function clearRows(store: Store, siteId: string, only?: { day: string; before: number }): Promise<void> {
  return only
    ? tombstone(store, SEARCH_TABLE, COLUMNS, 'site_id = {s:UUID} AND date = {d:Date} AND version < {before:UInt64}', { s: siteId, d: only.day, before: only.before })
    : tombstone(store, SEARCH_TABLE, COLUMNS, 'site_id = {s:UUID}', { s: siteId });
}

/** The oldest day stored as not final yet, if any: a refresh re-imports from there. */
export async function oldestNotFinal(store: Store, siteId: string): Promise<string | undefined> {
  const rows = await store.query<{ d: string | null }>(
    `SELECT toString(minOrNull(date)) AS d FROM ${store.table(SEARCH_TABLE)} FINAL WHERE site_id = {s:UUID} AND is_final = 0 AND is_deleted = 0`,
    { s: siteId });
  return rows[0]?.d ?? undefined;
}
