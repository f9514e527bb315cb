import { BoundedMemo } from './memo';

/**
 * What an event's page URL says: hostname, path and the campaign parameters. The path is decoded
 * with decodeURI (reserved characters such as %2F stay encoded, so segments never change) so reports
 * show `/café`, not `/caf%C3%A9`.
 */
export interface PageFields {
  hostname: string;
  pathname: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  gad_campaign_id: string;
  gclid: string;
}

export const MAX_URL_LENGTH = 4096;

/**
 * A link target (`exit_link`/`file_download`), live or imported, must be an absolute URL: reports
 * group those events by it. Null, or the refusal naming the field as the sender spelled it.
 */
export const absoluteUrlProblem = (value: string, field: string): string | null =>
  URL.canParse(value) ? null : `${field} must be an absolute URL`;
const MAX_PARAM = 500;

/** An absolute http(s) URL, or a message saying what is wrong with it. */
export function parseHttpUrl(value: string, field: string): URL | string {
  if (value.length > MAX_URL_LENGTH) return `${field} is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field} must be an absolute URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${field} must be an http or https URL`;
  if (!url.hostname) return `${field} has no hostname`;
  return url;
}

function safeDecode(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

const param = (url: URL, name: string) => (url.searchParams.get(name) ?? '').trim().slice(0, MAX_PARAM);

/** `hashMode` keeps the fragment in the path (hash-routed single-page apps, Plausible's `h: 1`). */
export function pageFields(url: URL, hashMode = false): PageFields {
  const path = safeDecode(url.pathname || '/') + (hashMode && url.hash.length > 1 ? safeDecode(url.hash) : '');
  return {
    hostname: url.hostname.toLowerCase().replace(/\.$/, ''),
    pathname: path.slice(0, 2000),
    utm_source: param(url, 'utm_source'),
    utm_medium: param(url, 'utm_medium'),
    utm_campaign: param(url, 'utm_campaign'),
    utm_term: param(url, 'utm_term'),
    utm_content: param(url, 'utm_content'),
    gad_campaign_id: param(url, 'gad_campaignid'),
    gclid: param(url, 'gclid'),
  };
}

const PAGE_MEMO = 5000;
const byHref = [new BoundedMemo<PageFields>(PAGE_MEMO), new BoundedMemo<PageFields>(PAGE_MEMO)];

/** pageFields, remembered per href (the whole input: every field is derived from it). Shared: do not mutate. */
export function cachedPageFields(url: URL, hashMode = false): PageFields {
  const memo = byHref[hashMode ? 1 : 0];
  const href = url.href;
  if (href.length > MAX_URL_LENGTH) return pageFields(url, hashMode);
  return memo.get(href) ?? memo.set(href, pageFields(url, hashMode));
}

export const stripWww = (host: string) => (host.startsWith('www.') ? host.slice(4) : host);

