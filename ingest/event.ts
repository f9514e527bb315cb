import { randomUUID } from 'node:crypto';
import { isoToCh } from '../clickhouse/meta';
import { NO_GEO, type GeoFields, type GeoLookup } from './enrich/geo';
import { trafficSource } from './enrich/referrer';
import { pageFields } from './enrich/url';
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
  ts: Date;
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

export function enrichEvent(input: EventInput, site: SiteRef, geo: GeoLookup): EnrichedEvent {
  const page = pageFields(input.url, input.hashMode);
  // Live ingest always passes the header ('' when absent, which classifies as a bot).
  const client = input.userAgent === undefined ? UNKNOWN_CLIENT : parseUserAgent(input.userAgent);
  return {
    site_id: site.id,
    ts: isoToCh(input.ts),
    name: input.name,
    event_id: randomUUID(),
    ...client,
    hostname: page.hostname,
    pathname: page.pathname,
    link: input.link ?? '',
    value_cents: input.valueCents ?? 0,
    props: input.props ?? {},
    ...trafficSource(page, input.referrer, site.domain),
    utm_source: page.utm_source,
    utm_medium: page.utm_medium,
    utm_campaign: page.utm_campaign,
    utm_term: page.utm_term,
    utm_content: page.utm_content,
    gad_campaign_id: page.gad_campaign_id,
    gclid: page.gclid,
    ...geoOf(input, geo),
  };
}

/** Session attribute keys including the entry fields, in one fixed order (compact session state). */
export const SESSION_KEYS = ['entry_path', 'entry_hostname', ...SESSION_ATTRIBUTES] as const;

export interface SessionFields {
  visitor_id: string;
  session_id: string;
  session_start: string;
  attributes: SessionAttributes;
}

type Source = 'event' | 'session' | 'attribute';
const SESSION_COLUMNS = new Set<string>(['visitor_id', 'session_id', 'session_start']);
const ATTRIBUTE_COLUMNS = new Set<string>(SESSION_KEYS);
const SOURCES: readonly Source[] = EVENT_COLUMNS.map((c) =>
  SESSION_COLUMNS.has(c) ? 'session' : ATTRIBUTE_COLUMNS.has(c) ? 'attribute' : 'event');

/**
 * The positional row (EVENT_COLUMNS order) of an event in its session, built in one pass: this is
 * the live hot path, so no intermediate merged object is made.
 */
export function positionalRow(e: EnrichedEvent, s: SessionFields): unknown[] {
  const row = new Array<unknown>(EVENT_COLUMNS.length);
  const ev = e as unknown as Record<string, unknown>;
  const attrs = s.attributes as unknown as Record<string, unknown>;
  const sess = s as unknown as Record<string, unknown>;
  for (let i = 0; i < EVENT_COLUMNS.length; i++) {
    const c = EVENT_COLUMNS[i];
    row[i] = SOURCES[i] === 'event' ? ev[c] : SOURCES[i] === 'attribute' ? attrs[c] : sess[c];
  }
  return row;
}

/** The session attributes an event would give its session if it were the first. */
export function sessionAttributesOf(e: EnrichedEvent): SessionAttributes {
  const out = { entry_path: e.pathname, entry_hostname: e.hostname } as SessionAttributes;
  for (const k of SESSION_ATTRIBUTES) (out as Record<string, unknown>)[k] = e[k];
  return out;
}
