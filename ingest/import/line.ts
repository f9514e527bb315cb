import { isIP } from 'node:net';
import type { EventInput } from '../event';
import { isError, LINK_EVENTS, linkRequired, parseName, parseProps, parseValueCents, type FieldError } from '../props';
import { MAX_URL_LENGTH, parseHttpUrl } from '../enrich/url';
import { isCountryCode } from '../../core/countries';
import { REPORTABLE } from '../../core/time';
import { malformedMessage, malformedTextAt } from '../../core/text';

/**
 * One NDJSON import line (PRODUCT.md §2) to an event, or the message that says why it is refused.
 * Unknown fields are ignored, so exports from newer versions still import.
 */
export interface ImportedEvent {
  input: EventInput;
  visitor?: string;
  session?: string;
}

// The offset as ISO 8601 allows it: Z, ±hh:mm, ±hhmm or ±hh.
const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)$/i;

type Obj = Record<string, unknown>;

function optString(o: Obj, field: string, max: number): string | undefined | FieldError {
  const v = o[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return { error: `${field} must be a string` };
  if (v.length > max) return { error: `${field} is longer than ${max} characters` };
  return v;
}

function absoluteUrl(o: Obj, field: string): string | undefined | FieldError {
  const v = optString(o, field, MAX_URL_LENGTH);
  if (typeof v !== 'string') return v;
  try {
    new URL(v);
    return v;
  } catch {
    return { error: `${field} must be an absolute URL` };
  }
}

/** Events a report window may cover (REPORTABLE): events beyond could never be read. */
const FIRST_YEAR = 1970;
const LAST_YEAR = 2200;

/**
 * An ISO 8601 date-time with an offset, checked field by field: Date.parse rolls 2026-02-30 over
 * into March, and ClickHouse reads year 0000 as the current year, so neither may reach a row.
 */
function parseTs(v: unknown): Date | string {
  if (v === undefined || v === null) return 'ts is required';
  if (typeof v !== 'string') return 'ts must be an ISO 8601 timestamp with an offset, e.g. 2026-01-02T03:04:05Z';
  const m = ISO_WITH_OFFSET.exec(v);
  if (!m) return 'ts must be an ISO 8601 timestamp with an offset, e.g. 2026-01-02T03:04:05Z';
  const [y, mo, d, h, mi, s, oh, om] = m.slice(1).map((x) => Number(x ?? 0));
  const outOfRange = `ts must lie between ${FIRST_YEAR} and ${LAST_YEAR}`;
  if (y < FIRST_YEAR - 1 || y > LAST_YEAR + 1) return outOfRange; // (Date.UTC reads years 0-99 as 1900-1999)
  const day = new Date(Date.UTC(y, mo - 1, d));
  const calendar = day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
  if (!calendar || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return `ts is not a valid date and time: ${v.slice(0, 40)}`;
  // Date.parse reads ±hh:mm and ±hhmm but not a bare ±hh.
  const ms = Date.parse(/[+-]\d{2}$/.test(v) ? `${v}:00` : v);
  if (!Number.isFinite(ms)) return `ts is not a valid date and time: ${v.slice(0, 40)}`;
  if (ms < REPORTABLE.fromMs || ms >= REPORTABLE.toMs) return outOfRange;
  return new Date(ms);
}

interface Required { ts: Date; name: string; url: URL }

function parseRequired(obj: Obj): Required | string {
  const ts = parseTs(obj.ts);
  if (typeof ts === 'string') return ts;
  const name = parseName(obj.name);
  if (isError(name)) return name.error;
  if (obj.url === undefined || obj.url === null || obj.url === '') return 'url is required';
  if (typeof obj.url !== 'string') return 'url must be a string';
  const url = parseHttpUrl(obj.url, 'url');
  return typeof url === 'string' ? url : { ts, name, url };
}

type Optional = Record<'referrer' | 'link' | 'visitor' | 'session' | 'user_agent' | 'ip' | 'country' | 'region' | 'city', string | undefined>;

function parseOptional(obj: Obj): Optional | string {
  const fields = {
    referrer: absoluteUrl(obj, 'referrer'),
    link: absoluteUrl(obj, 'link'),
    visitor: optString(obj, 'visitor', 500),
    session: optString(obj, 'session', 500),
    user_agent: optString(obj, 'user_agent', 2000),
    ip: optString(obj, 'ip', 100),
    country: optString(obj, 'country', 100),
    region: optString(obj, 'region', 200),
    city: optString(obj, 'city', 200),
  };
  for (const v of Object.values(fields)) if (isError(v)) return v.error;
  const f = fields as Optional;
  if (f.ip !== undefined && isIP(f.ip) === 0) return 'ip must be an IPv4 or IPv6 address';
  if (f.country !== undefined && !isCountryCode(f.country)) return 'country must be an ISO 3166-1 alpha-2 code';
  return f;
}

/** Field checks in reading order; the first failure is the line's message. */
export function parseImportLine(text: string): ImportedEvent | string {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return 'each line must be a JSON object';
  const obj = o as Obj;
  const bad = malformedTextAt(obj, '');
  if (bad) return malformedMessage(bad);
  const req = parseRequired(obj);
  if (typeof req === 'string') return req;
  const f = parseOptional(obj);
  if (typeof f === 'string') return f;
  if (LINK_EVENTS.has(req.name) && !f.link) return linkRequired(req.name, 'link');
  const valueCents = parseValueCents(obj.value_cents);
  if (typeof valueCents === 'string') return valueCents;
  const props = parseProps(obj.props);
  if (typeof props === 'string') return props;
  return {
    input: {
      ...req, referrer: f.referrer, userAgent: f.user_agent, ip: f.ip, link: f.link, valueCents, props,
      geo: { country: f.country, region: f.region, city: f.city },
    },
    visitor: f.visitor,
    session: f.session,
  };
}
