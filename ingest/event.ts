import { randomUUID } from 'node:crypto';
import { isoToCh } from '../clickhouse/meta';
import { NO_GEO, type GeoFields, type GeoLookup } from './enrich/geo';
import { cachedTrafficSource } from './enrich/referrer';
import { cachedPageFields } from './enrich/url';
import { parseUserAgent, type ClientFields } from './enrich/user-agent';

/**
 * One row of the events table (clickhouse/migrations/0001_events.sql), and how a validated event
 * becomes one. Import and live ingest share this file, so an imported row is enriched exactly as a
 * live one.
 */
export interface EventRow {
  site_id: string;
  ts: string;
  name: string;
  event_id: string;
  visitor_id: string;
  session_id: string;
  session_start: string;
  is_bot: 0 | 1;
  bot_kind: string;
  crawler_name: string;
  crawler_operator: string;
  hostname: string;
  pathname: string;
  link: string;
  value_cents: number;
  props: Record<string, string>;
  entry_path: string;
  entry_hostname: string;
  referrer: string;
  referrer_source: string;
  channel: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  gad_campaign_id: string;
  gclid: string;
  country: string;
  region: string;
  city: string;
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
  device: string;
}

/** Every column, in one fixed order: live ingest inserts positional rows (JSONCompactEachRow). */
export const EVENT_COLUMNS = [
  'site_id', 'ts', 'name', 'event_id', 'visitor_id', 'session_id', 'session_start', 'is_bot', 'bot_kind', 'crawler_name',
  'crawler_operator', 'hostname', 'pathname', 'link', 'value_cents', 'props', 'entry_path', 'entry_hostname', 'referrer',
  'referrer_source', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gad_campaign_id', 'gclid',
  'country', 'region', 'city', 'browser', 'browser_version', 'os', 'os_version', 'device',
] as const satisfies readonly (keyof EventRow)[];

// A column added to EventRow but not to EVENT_COLUMNS fails to compile here.
type Missing = Exclude<keyof EventRow, (typeof EVENT_COLUMNS)[number]>;
const allColumnsListed: Missing extends never ? true : Missing = true;
void allColumnsListed;


/**
 * A session's attributes: those of its first event, copied onto every event of the session so
 * session filters and breakdowns need no join. entry_path/entry_hostname come from the first
 * event's pathname/hostname.
 */
export const SESSION_ATTRIBUTES = [
  'referrer', 'referrer_source', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content',
  'gad_campaign_id', 'gclid', 'country', 'region', 'city', 'browser', 'browser_version', 'os', 'os_version', 'device',
] as const satisfies readonly (keyof EventRow)[];

export type SessionAttributes = Pick<EventRow, (typeof SESSION_ATTRIBUTES)[number] | 'entry_path' | 'entry_hostname'>;

/** The row before sessionisation: everything but the visitor/session ids and the entry fields. */
export type EnrichedEvent = Omit<EventRow, 'visitor_id' | 'session_id' | 'session_start' | 'entry_path' | 'entry_hostname'>;

export interface EventInput {
  /** A Date, or epoch milliseconds (live ingest: no Date object per event). */
  ts: Date | number;
  name: string;
  url: URL;
  hashMode?: boolean;
  referrer?: string;
  userAgent?: string;
  ip?: string;
  link?: string;
  valueCents?: number;
  props?: Record<string, string>;
  /** Operator overrides of the IP lookup (imports). */
  geo?: Partial<GeoFields>;
}

export interface SiteRef {
  id: string;
  domain: string;
}

/** An explicit country replaces the whole lookup (a foreign region/city would contradict it). */
function geoOf(input: EventInput, geo: GeoLookup): GeoFields {
  const o = input.geo ?? {};
  if (o.country) return { country: o.country.toUpperCase(), region: o.region ?? '', city: o.city ?? '' };
  const looked = input.ip ? geo.lookup(input.ip) : NO_GEO;
  return { country: looked.country, region: o.region ?? looked.region, city: o.city ?? looked.city };
}

/** An imported line without a user agent says nothing about its client: human, fields empty. */
const UNKNOWN_CLIENT: ClientFields = {
  browser: '', browser_version: '', os: '', os_version: '', device: '', is_bot: 0, bot_kind: '', crawler_name: '', crawler_operator: '',
};

/**
 * Built as one object literal (no spreads): live ingest makes one per event, and a fixed shape keeps
 * the property reads of positionalRow and sessionAttributesOf monomorphic.
 */
export function enrichEvent(input: EventInput, site: SiteRef, geo: GeoLookup): EnrichedEvent {
  const page = cachedPageFields(input.url, input.hashMode);
  // Live ingest always passes the header ('' when absent, which classifies as a bot).
  const client = input.userAgent === undefined ? UNKNOWN_CLIENT : parseUserAgent(input.userAgent);
  const source = cachedTrafficSource(page, input.referrer, site.domain);
  const place = geoOf(input, geo);
  return {
    site_id: site.id,
    ts: typeof input.ts === 'number' ? chTimestamp(input.ts) : isoToCh(input.ts),
    name: input.name,
    event_id: randomUUID(),
    browser: client.browser,
    browser_version: client.browser_version,
    os: client.os,
    os_version: client.os_version,
    device: client.device,
    is_bot: client.is_bot,
    bot_kind: client.bot_kind,
    crawler_name: client.crawler_name,
    crawler_operator: client.crawler_operator,
    hostname: page.hostname,
    pathname: page.pathname,
    link: input.link ?? '',
    value_cents: input.valueCents ?? 0,
    props: input.props ?? {},
    referrer: source.referrer,
    referrer_source: source.referrer_source,
    channel: source.channel,
    utm_source: page.utm_source,
    utm_medium: page.utm_medium,
    utm_campaign: page.utm_campaign,
    utm_term: page.utm_term,
    utm_content: page.utm_content,
    gad_campaign_id: page.gad_campaign_id,
    gclid: page.gclid,
    country: place.country,
    region: place.region,
    city: place.city,
  };
}

/** Years 0000-9999: where toISOString has its plain four-digit form. */
const LAST_PLAIN_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
let cachedSecond = NaN;
let cachedPrefix = '';

/**
 * isoToCh(new Date(ms)) ('YYYY-MM-DD HH:MM:SS.mmm'), formatting the date and time once per second:
 * events of the same second differ in their milliseconds only.
 */
export function chTimestamp(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_PLAIN_MS) return isoToCh(new Date(ms));
  const milli = ms % 1000;
  const second = ms - milli;
  if (second !== cachedSecond) {
    cachedPrefix = isoToCh(new Date(second)).slice(0, 20);
    cachedSecond = second;
  }
  return cachedPrefix + (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli;
}

/** Session attribute keys including the entry fields, in one fixed order (compact session state). */
export const SESSION_KEYS = ['entry_path', 'entry_hostname', ...SESSION_ATTRIBUTES] as const;

export interface SessionFields {
  visitor_id: string;
  session_id: string;
  session_start: string;
  attributes: SessionAttributes;
}

/**
 * The positional row (EVENT_COLUMNS order) of an event in its session: one array literal, the live
 * hot path (a loop over the column names made a keyed lookup per column). The unit test checks the
 * order against EVENT_COLUMNS.
 */
export function positionalRow(e: EnrichedEvent, s: SessionFields): unknown[] {
  const a = s.attributes;
  return [
    e.site_id, e.ts, e.name, e.event_id, s.visitor_id, s.session_id, s.session_start, e.is_bot, e.bot_kind, e.crawler_name,
    e.crawler_operator, e.hostname, e.pathname, e.link, e.value_cents, e.props, a.entry_path, a.entry_hostname, a.referrer,
    a.referrer_source, a.channel, a.utm_source, a.utm_medium, a.utm_campaign, a.utm_term, a.utm_content, a.gad_campaign_id, a.gclid,
    a.country, a.region, a.city, a.browser, a.browser_version, a.os, a.os_version, a.device,
  ];
}

/** The session attributes an event would give its session if it were the first (SESSION_KEYS order). */
export function sessionAttributesOf(e: EnrichedEvent): SessionAttributes {
  return {
    entry_path: e.pathname, entry_hostname: e.hostname, referrer: e.referrer, referrer_source: e.referrer_source, channel: e.channel,
    utm_source: e.utm_source, utm_medium: e.utm_medium, utm_campaign: e.utm_campaign, utm_term: e.utm_term, utm_content: e.utm_content,
    gad_campaign_id: e.gad_campaign_id, gclid: e.gclid, country: e.country, region: e.region, city: e.city, browser: e.browser,
    browser_version: e.browser_version, os: e.os, os_version: e.os_version, device: e.device,
  };
}
