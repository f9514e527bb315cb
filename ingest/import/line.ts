import { isIP } from 'node:net';
import type { EventInput } from '../event';
import { isError, LINK_EVENTS, linkRequired, parseName, parseProps, parseValueCents, type FieldError } from '../props';
import { MAX_URL_LENGTH, absoluteUrlProblem, parseHttpUrl } from '../enrich/url';
import { noControlCharacters } from '../../core/fields';
import { isCountryCode } from '../../core/countries';
import { REPORTABLE } from '../../core/time';
import { NOT_AN_INSTANT, parseInstant } from '../../core/instant';
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
  const problem = absoluteUrlProblem(v, field);
  return problem ? { error: problem } : v;
}

const TS_FORMAT = 'ts must be an ISO 8601 timestamp with an offset, e.g. 2026-01-02T03:04:05Z';

/** core/instant's reading of `ts` (the reports' `from`/`to` read the same), within what a report can cover. */
function parseTs(v: unknown): Date | string {
  if (v === undefined || v === null) return 'ts is required';
  if (typeof v !== 'string') return TS_FORMAT;
  const ms = parseInstant(v);
  // A value that matched the shape is short, so the message can echo it whole.
  if (typeof ms === 'string') return ms === NOT_AN_INSTANT ? TS_FORMAT : `ts ${ms}`;
  if (ms < REPORTABLE.fromMs || ms >= REPORTABLE.toMs) return 'ts must lie between 1970 and 2200';
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
  // Ids hash their parts joined by U+001F (ingest/hash): a control character in one could make two
  // visitors' strings hash alike ("a\x1fb" + "c" and "a" + "b\x1fc"). Exports never hold them.
  for (const field of ['visitor', 'session'] as const) {
    const verdict = f[field] === undefined ? true : noControlCharacters(f[field]);
    if (verdict !== true) return `${field} ${verdict}`;
  }
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
