import { isIP } from 'node:net';
import type { SessionStrategy } from '../../core/domain';
import { hash64, visitorIdFor } from '../hash';
import { randomBase64url } from './random';
import { DAILY, SESSION_WINDOW, type SaltStore } from './salts';

/**
 * Who a live event's visitor is, per the site's session strategy (PRODUCT.md §3):
 * - first_party_cookie: the token the tracker keeps for a year (issued by us on the first hit from a
 *   browser, returned in the response); returning visitors are real.
 * - salted_hash: hash(daily salt, site, IP, user agent): unique per day, nothing stored on the device.
 * - cookieless_strict: hash(30-minute salt, site, truncated IP, user agent): no identifier outlives
 *   a session.
 * `candidates` lists identities a continuing session may be filed under: the current period's first,
 * then the previous period's, so a session crossing midnight (or a window boundary) is not cut.
 */
export interface Identity {
  candidates: { key: string; visitorId: string }[];
  /**
   * first_party_cookie only: the token in use (received or newly issued), echoed to the tracker so it
   * keeps (and refreshes) its cookie; its absence tells the tracker to delete any cookie it holds.
   */
  token?: string;
}

export interface IdentityInput {
  strategy: SessionStrategy;
  siteId: string;
  ip: string;
  userAgent: string;
  token?: string;
  /** The request came from a browser (it sent Origin), so a first-party token can be kept. */
  fromBrowser: boolean;
  nowMs: number;
}

/** /24 for IPv4, /48 for IPv6: enough to tell networks apart, not households. */
export function truncateIp(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/i.exec(ip);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0`;
  if (isIP(ip) !== 6) return '';
  const [head] = ip.toLowerCase().split('::');
  const groups = head.split(':').filter(Boolean).slice(0, 3);
  while (groups.length < 3) groups.push('0');
  return groups.join(':') + '::';
}

const TOKEN_RE = /^[A-Za-z0-9_-]{8,64}$/;
export const isValidToken = (t: unknown): t is string => typeof t === 'string' && TOKEN_RE.test(t);

type Candidate = Identity['candidates'][number];

/**
 * The salted-hash candidates. Salts are remembered in memory, so this is synchronous on every event
 * but the first of a period; only then is a promise made.
 */
function saltedCandidates(salts: SaltStore, i: IdentityInput, strict: boolean): Candidate[] | Promise<Candidate[]> {
  const kind = strict ? SESSION_WINDOW : DAILY;
  const period = Math.floor(i.nowMs / kind.periodMs);
  const ip = strict ? truncateIp(i.ip) : i.ip;
  const of = (salt: string) => candidate(i.siteId, hash64(kind.name, salt, i.siteId, ip, i.userAgent));
  const current = salts.salt(kind, period, i.nowMs);
  const previous = typeof current === 'string' ? salts.existing(kind, period - 1, i.nowMs) : null;
  if (typeof current === 'string' && !(previous instanceof Promise)) {
    return previous ? [of(current), of(previous)] : [of(current)];
  }
  return (async () => {
    const out = [of(await current)];
    const prev = await (previous ?? salts.existing(kind, period - 1, i.nowMs));
    if (prev) out.push(of(prev));
    return out;
  })();
}

/**
 * The first-party token of a cookie site's visitor: the one the browser sent when it is valid, a new
 * one for a browser that sent none, none for a server-side sender (which falls back to the salted
 * hash). One rule for the id stored and the token answered (collector's answerToken), so the two
 * cannot drift apart.
 */
export function firstPartyToken(sent: string | undefined, fromBrowser: boolean): string | undefined {
  if (isValidToken(sent)) return sent;
  return fromBrowser ? randomBase64url(12) : undefined;
}

/** Who the visitor is; synchronous (no promise) whenever the salts are already known. */
export function identify(salts: SaltStore, i: IdentityInput): Identity | Promise<Identity> {
  if (i.strategy === 'first_party_cookie') {
    const token = firstPartyToken(i.token, i.fromBrowser);
    if (token) return { candidates: [firstParty(i.siteId, token)], token };
    // A server-side sender without a token: fall back to the daily salted hash.
  }
  const candidates = saltedCandidates(salts, i, i.strategy === 'cookieless_strict');
  return candidates instanceof Promise ? candidates.then((c) => ({ candidates: c })) : { candidates };
}

const firstParty = (siteId: string, token: string) => candidate(siteId, visitorIdFor(siteId, token));

/** Session state is filed per site and visitor id. */
const candidate = (siteId: string, visitorId: string) => ({ key: `${siteId}:${visitorId}`, visitorId });
