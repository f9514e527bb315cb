import { isError, LINK_EVENTS, linkRequired, parseName, parseProps, parseValueCents, PLAUSIBLE_NAMES, type FieldError } from '../props';
import { BoundedMemo } from '../enrich/memo';
import { MAX_URL_LENGTH, absoluteUrlProblem, parseHttpUrl, stripWww } from '../enrich/url';
import { clip, malformedMessage, malformedTextAt } from '../../core/text';
import { asciiHost } from '../../core/hostname';

/**
 * The body of POST /api/event: Plausible's event payload, long or short field names (`name`/`n`,
 * `url`/`u`, `domain`/`d`, `referrer`/`r`, `props`/`p`, hash mode `h`), plus `value_cents` and
 * `visitor` (the first-party token). `props` may also be a JSON-encoded string, as older Plausible
 * trackers send it. `domain` may list several sites separated by commas (Plausible's roll-up); it
 * defaults to the URL's hostname without `www.`. Unknown fields are ignored. Every refusal names
 * the field.
 */
export interface EventPayload {
  /** As stored: Plausible's `Outbound Link: Click` / `File Download` are `exit_link` / `file_download`. */
  name: string;
  /** The target of an `exit_link` / `file_download` (Plausible's `props.url`, taken out of props). */
  link?: string;
  url: URL;
  domains: string[];
  referrer?: string;
  props: Record<string, string>;
  valueCents?: number;
  visitor?: string;
  hashMode: boolean;
}

const MAX_DOMAINS = 10;
type Obj = Record<string, unknown>;

const pick = (o: Obj, long: string, short: string): unknown => (o[long] !== undefined ? o[long] : o[short]);
/** The field's name as the payload spelled it, for refusals: a tracker sending `u` is told about `u`. */
const given = (o: Obj, long: string, short: string): string => (o[long] === undefined && o[short] !== undefined ? short : long);

function requiredString(o: Obj, long: string, short: string): string | FieldError {
  const v = pick(o, long, short);
  if (v === undefined || v === null || v === '') return { error: `${long} is required` };
  if (typeof v !== 'string') return { error: `${given(o, long, short)} must be a string` };
  return v;
}

function optionalString(o: Obj, long: string, short: string, max: number): string | undefined | FieldError {
  const v = pick(o, long, short);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return { error: `${given(o, long, short)} must be a string` };
  return clip(v, max);
}

function propsOf(o: Obj): Record<string, string> | string {
  let v = pick(o, 'props', 'p');
  if (v === undefined || v === null) return {};
  const field = given(o, 'props', 'p');
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return `${field} must be an object (or a JSON-encoded object)`;
    }
    const bad = malformedTextAt(v, field);
    if (bad) return malformedMessage(bad);
  }
  return parseProps(v, field);
}

/** Plausible's hash mode: 1 (or true) counts the #fragment as part of the path; 0, false or absent not. */
function hashModeOf(o: Obj): boolean | string {
  const h = pick(o, 'hash_mode', 'h');
  if (h === undefined || h === null || h === 0 || h === false) return false;
  if (h === 1 || h === true) return true;
  return `${given(o, 'hash_mode', 'h')} must be 1, 0, true or false`;
}

function domainsOf(o: Obj, url: URL): string[] | string {
  const d = optionalString(o, 'domain', 'd', 2000);
  if (typeof d === 'object') return d.error;
  const text = d ?? stripWww(url.hostname);
  // One domain is the usual payload: no split, map, filter and Set for it.
  if (!text.includes(',')) {
    const one = asciiHost(text.trim().toLowerCase());
    return one ? [one] : `${given(o, 'domain', 'd')} must name a site`;
  }
  const list = text.split(',').map((x) => asciiHost(x.trim().toLowerCase())).filter(Boolean);
  if (list.length === 0 || list.length > MAX_DOMAINS) {
    return `${given(o, 'domain', 'd')} ${list.length ? `lists at most ${MAX_DOMAINS} sites` : 'must name a site'}`;
  }
  return [...new Set(list)];
}

/**
 * Parsed page URLs, remembered per text: most events name a page parsed moments ago, and new URL()
 * is one of the costlier steps per event. Refusals are not remembered. Shared objects: never mutated.
 */
const urls = new BoundedMemo<URL>(5000);

const MEMO_URL_MAX = 2000;

/** `o` only names the field in a refusal (`u` or `url`); a memo hit costs no lookup of it. */
function pageUrl(raw: string, o: Obj): URL | string {
  if (raw.length > MEMO_URL_MAX) return parseHttpUrl(raw, given(o, 'url', 'u'));
  const hit = urls.get(raw);
  if (hit) return hit;
  const url = parseHttpUrl(raw, given(o, 'url', 'u'));
  return typeof url === 'string' ? url : urls.set(raw, url);
}

export function parsePayload(body: unknown): EventPayload | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  const o = body as Obj;
  const bad = malformedTextAt(o, '');
  if (bad) return malformedMessage(bad);
  const name = parseName(pick(o, 'name', 'n'), given(o, 'name', 'n'));
  if (isError(name)) return name.error;
  const rawUrl = requiredString(o, 'url', 'u');
  if (isError(rawUrl)) return rawUrl.error;
  const url = pageUrl(rawUrl, o);
  if (typeof url === 'string') return url;
  const domains = domainsOf(o, url);
  if (typeof domains === 'string') return domains;
  const referrer = optionalString(o, 'referrer', 'r', MAX_URL_LENGTH);
  if (isError(referrer)) return referrer.error;
  const visitor = optionalString(o, 'visitor', 'visitor', 100);
  if (isError(visitor)) return visitor.error;
  const props = propsOf(o);
  if (typeof props === 'string') return props;
  const stored = PLAUSIBLE_NAMES.get(name) ?? name;
  let link: string | undefined;
  if (LINK_EVENTS.has(stored)) {
    // Plausible's convention: the link target travels as props.url, a prop value, so clipped at
    // 2,000 characters as every prop value is (an import's `link` is refused beyond 4,096).
    const field = `${given(o, 'props', 'p')}.url`;
    if (!props.url) return linkRequired(stored, field);
    const notAbsolute = absoluteUrlProblem(props.url, field);
    if (notAbsolute) return notAbsolute;
    link = props.url;
    delete props.url;
  }
  const valueCents = parseValueCents(o.value_cents);
  if (typeof valueCents === 'string') return valueCents;
  const hashMode = hashModeOf(o);
  if (typeof hashMode === 'string') return hashMode;
  return { name: stored, link, url, domains, referrer, props, valueCents, visitor, hashMode };
}
