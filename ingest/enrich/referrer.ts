import { channelOf } from './channel';
import { lookupHost, lookupSourceName, type SourceCategory } from './sources';
import { BoundedMemo } from './memo';
import { withinDomain } from '../../core/hostname';
import { stripWww, type PageFields } from './url';

/**
 * Where a visit came from. `referrer` is the referring hostname without `www.` ('' for direct), the
 * breakdown label as stored; `referrer_source` is the display name (utm_source first, as GA4 and
 * Plausible do, then the known name of the referring site, then its hostname); `channel` is the GA4
 * default channel. A referrer on the page's own host or inside the site's domain is a self-referral
 * and counts as direct.
 */
export interface TrafficSource {
  referrer: string;
  referrer_source: string;
  channel: string;
}

export function referrerHost(referrer: string | undefined): string {
  if (!referrer) return '';
  try {
    return new URL(referrer).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return '';
  }
}

function isSelfReferral(refHost: string, page: PageFields, siteDomain: string): boolean {
  return stripWww(refHost) === stripWww(page.hostname) || (!!siteDomain && withinDomain(refHost, siteDomain));
}

/**
 * GA4's medium. A manual utm_source takes the referrer's place entirely (source and medium), so
 * without utm_medium the medium is `(not set)` whatever referred the visit: `?utm_source=news` from
 * a Google result is news / (not set), Unassigned, not Organic Search or Referral; the source's own
 * category still decides (`?utm_source=google` is Organic Search).
 */
function mediumOf(page: PageFields, refHost: string, category: SourceCategory | null, googleAds: boolean): string {
  if (page.utm_medium) return page.utm_medium.toLowerCase();
  if (googleAds) return 'cpc'; // Google Ads auto-tagging: gclid / gad_campaignid mean google / cpc
  if (page.utm_source) return '(not set)';
  if (refHost) return category === 'search' ? 'organic' : category === 'email' ? 'email' : 'referral';
  return '(none)';
}

export function trafficSource(page: PageFields, referrer: string | undefined, siteDomain: string): TrafficSource {
  let refHost = referrerHost(referrer);
  if (refHost && isSelfReferral(refHost, page, siteDomain)) refHost = '';
  const host = stripWww(refHost);
  const googleAds = !!(page.gclid || page.gad_campaign_id);
  const fromRef = refHost ? lookupHost(refHost) : null;
  const fromUtm = page.utm_source ? lookupSourceName(page.utm_source) : null;
  const category = page.utm_source ? fromUtm?.category ?? null : googleAds ? 'search' : fromRef?.category ?? null;
  const source = page.utm_source ? page.utm_source.toLowerCase() : googleAds ? 'google' : host || '(direct)';
  const channel = channelOf({
    source,
    medium: mediumOf(page, refHost, category, googleAds),
    campaign: page.utm_campaign.toLowerCase(),
    category,
  });
  const display = page.utm_source
    ? fromUtm?.source ?? page.utm_source
    : googleAds ? 'Google' : host ? fromRef?.source ?? host : '';
  return { referrer: host, referrer_source: display, channel };
}

const SOURCE_MEMO = 5000;
/** Longer referrers (search result URLs with their query) are rarely repeated: not worth a slot. */
const MEMO_REFERRER_MAX = 300;
const sources = new BoundedMemo<TrafficSource>(SOURCE_MEMO);

/**
 * trafficSource, remembered per input: the referrer, the site's domain and the page fields it reads
 * (hostname, utm_source/medium/campaign, whether Google Ads ids are present). Shared: do not mutate.
 */
export function cachedTrafficSource(page: PageFields, referrer: string | undefined, siteDomain: string): TrafficSource {
  const ref = referrer ?? '';
  if (ref.length > MEMO_REFERRER_MAX || page.utm_campaign.length > MEMO_REFERRER_MAX) return trafficSource(page, referrer, siteDomain);
  const ads = page.gclid || page.gad_campaign_id ? '1' : '0';
  // Length-prefixed, so no field's content (a referrer may hold any character) can fake a boundary.
  const key = `${ref.length}:${ref}${siteDomain.length}:${siteDomain}${page.hostname.length}:${page.hostname}` +
    `${page.utm_source.length}:${page.utm_source}${page.utm_medium.length}:${page.utm_medium}${page.utm_campaign.length}:${page.utm_campaign}${ads}`;
  return sources.get(key) ?? sources.set(key, trafficSource(page, referrer, siteDomain));
}
