import { auth, searchconsole, type searchconsole_v1 } from '@googleapis/searchconsole';
import type { Store } from '../clickhouse/store';
import { nextVersion } from '../core/ids';
import { SEARCH_PROVIDER, SEARCH_TABLE } from '../query/lower/search';
import { zonedParts } from '../query/window/zoned';

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
export const SEARCH_CONSOLE = SEARCH_PROVIDER;
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

const pad = (n: number) => String(n).padStart(2, '0');

/** The console's date (Pacific) at `ms`. */
export function consoleDate(ms: number): string {
  const p = zonedParts(ms, CONSOLE_TZ);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

/** `date` moved by whole days (calendar arithmetic on the date itself). */
export function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The first day of the month RETENTION_MONTHS before `today`'s: older days the console no longer has. */
export function retentionStart(today: string): string {
  const [y, m] = today.split('-').map(Number);
  const index = y * 12 + (m - 1) - RETENTION_MONTHS;
  return `${Math.floor(index / 12)}-${pad((index % 12) + 1)}-01`;
}

/** Days from `first` to `last` that have any impressions, newest first (one request). */
export async function datesWithData(sc: searchconsole_v1.Searchconsole, property: string, first: string, last: string): Promise<string[]> {
  if (first > last) return [];
  const res = await sc.searchanalytics.query({
    siteUrl: property,
    requestBody: { startDate: first, endDate: last, dimensions: ['date'], rowLimit: PAGE_ROWS, dataState: 'all', type: 'web' },
  });
  return (res.data.rows ?? []).filter((r) => (r.impressions ?? 0) > 0).map((r) => r.keys![0]).sort().reverse();
}

/** A row of the `search_console` table. */
interface SearchRow {
  site_id: string; date: string; term: string; hostname: string; path: string; clicks: number; impressions: number;
  position_sum: number; is_final: 0 | 1; version: number; is_deleted: 0;
}

/** `https://Shop.example/a/b?x=1` -> shop.example and /a/b, as event paths are stored. */
function pageParts(page: string): { hostname: string; path: string } {
  try {
    const url = new URL(page);
    return { hostname: url.hostname, path: url.pathname || '/' };
  } catch {
    return { hostname: '', path: page };
  }
}

/** Sum the API's rows per table key: URLs that differ only in query or fragment are one path. */
function addRow(into: Map<string, SearchRow>, r: searchconsole_v1.Schema$ApiDataRow, base: Omit<SearchRow, 'term' | 'hostname' | 'path' | 'clicks' | 'impressions' | 'position_sum'>) {
  const [, term = '', page = ''] = r.keys ?? [];
  const { hostname, path } = pageParts(page);
  const key = JSON.stringify([term, hostname, path]);
  const row = into.get(key) ?? { ...base, term, hostname, path, clicks: 0, impressions: 0, position_sum: 0 };
  const impressions = r.impressions ?? 0;
  row.clicks += r.clicks ?? 0;
  row.impressions += impressions;
  // The API's position is the impression-weighted average; stored as its summable part.
  row.position_sum += (r.position ?? 0) * impressions;
  into.set(key, row);
}

export interface DayImport {
  rows: number;
  requests: number;
}

/**
 * Import one day whole: every page of its (date, query, page) rows with fresh data included, final
 * unless the console says data from that day on is still being collected (`firstIncompleteDate`).
 */
export async function importDay(sc: searchconsole_v1.Searchconsole, store: Store, siteId: string, property: string, day: string): Promise<DayImport> {
  const version = nextVersion();
  const rows = new Map<string, SearchRow>();
  let final = true;
  let requests = 0;
  for (let startRow = 0; ; startRow += PAGE_ROWS) {
    const res = await sc.searchanalytics.query({
      siteUrl: property,
      requestBody: { startDate: day, endDate: day, dimensions: ['date', 'query', 'page'], rowLimit: PAGE_ROWS, startRow, dataState: 'all', type: 'web' },
    });
    requests++;
    const incomplete = res.data.metadata?.firstIncompleteDate;
    if (incomplete && incomplete <= day) final = false;
    const page = res.data.rows ?? [];
    for (const r of page) addRow(rows, r, { site_id: siteId, date: day, is_final: 0, version, is_deleted: 0 });
    if (page.length < PAGE_ROWS) break;
  }
  const stored = [...rows.values()].map((r) => ({ ...r, is_final: final ? 1 : 0 }));
  if (stored.length) await store.insert(SEARCH_TABLE, stored);
  await clearRows(store, siteId, { day, before: version });
  return { rows: stored.length, requests };
}

const COLUMNS = 'site_id, date, term, hostname, path, clicks, impressions, position_sum, is_final';

/**
 * Tombstones (is_deleted = 1 at a newer version) of the site's live rows: of one day and older than
 * the import that replaced it, or all of them (a re-sync). Readers read FINAL and skip tombstones, so
 * the rows are gone when the statement returns, on one node or a cluster alike.
 */
export async function clearRows(store: Store, siteId: string, only?: { day: string; before: number }): Promise<void> {
  const table = store.table(SEARCH_TABLE);
  const dayOnly = only ? 'AND date = {d:Date} AND version < {before:UInt64}' : '';
  await store.command(
    `INSERT INTO ${table} (${COLUMNS}, version, is_deleted) SELECT ${COLUMNS}, {v:UInt64}, 1 FROM ${table} FINAL
     WHERE site_id = {s:UUID} AND is_deleted = 0 ${dayOnly}`,
    { s: siteId, v: nextVersion(), ...(only ? { d: only.day, before: only.before } : {}) });
}

/** The oldest day stored as not final yet, if any: a refresh re-imports from there. */
export async function oldestNotFinal(store: Store, siteId: string): Promise<string | undefined> {
  const rows = await store.query<{ d: string | null }>(
    `SELECT toString(minOrNull(date)) AS d FROM ${store.table(SEARCH_TABLE)} FINAL WHERE site_id = {s:UUID} AND is_final = 0 AND is_deleted = 0`,
    { s: siteId });
  return rows[0]?.d ?? undefined;
}
