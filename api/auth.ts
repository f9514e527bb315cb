import type { Store } from '../clickhouse/store';
import type { Principal, Scope, Site } from '../core/domain';
import { forbidden, invalidCredential } from '../core/errors';
import { isUuid } from '../core/ids';
import { nowMs } from '../core/clock';
import { hashToken, hashesEqual, isWellFormedToken } from '../model/keys';
import type { AuthCache, ResolvedKey } from '../model/auth-cache';
import type { Repos } from '../model/repos';

interface KeyJoinRow {
  id: string; org_id: string; user_id: string; token_hash: string; scopes: Scope[]; all_sites: number; site_ids: string[];
  expires_at: string | null; revoked_at: string | null; m_all_sites: number; m_site_ids: string[]; retention_days: number;
}

/**
 * Resolve a bearer token to the caller's organisation, scopes and site reach, before any handler
 * runs. Every failure is the same 401: a caller cannot learn whether a key exists, was revoked or
 * expired. With a cache, a known key costs no query (see model/auth-cache.ts for why that is safe).
 */
export async function authenticate(
  store: Store, header: string | undefined, cache?: AuthCache, beforeLookup?: () => Promise<void>,
): Promise<Principal> {
  const hash = tokenHash(header);
  if (!hash) throw invalidCredential();
  // Only a cache miss queries storage; `beforeLookup` may refuse it (its error is thrown as is).
  const lookup = async () => {
    await beforeLookup?.();
    return loadKey(store, hash);
  };
  const key = cache ? await cache.key(hash, lookup) : await lookup();
  const principal = live(key);
  if (!principal) throw invalidCredential();
  return principal;
}

/**
 * The principal of a key this process resolved lately (the auth cache), or null, without any
 * lookup: what an address refused for failed authentications may still use, so a customer's working
 * key is not locked out by someone else's bad tokens behind the same NAT.
 */
export async function authenticateKnown(header: string | undefined, cache?: AuthCache): Promise<Principal | null> {
  const hash = tokenHash(header);
  return hash && cache ? live(await cache.known(hash)) : null;
}

function tokenHash(header: string | undefined): string | null {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return token && isWellFormedToken(token) ? hashToken(token) : null;
}

/** Checked on every request, cached or not: expiry needs no write to take effect. */
function live(key: ResolvedKey | null | undefined): Principal | null {
  if (!key || (key.expiresAtMs !== null && key.expiresAtMs <= nowMs())) return null;
  return key.principal;
}

/** One query joining key, membership and organisation; null when unknown, revoked or orphaned. */
async function loadKey(store: Store, hash: string): Promise<ResolvedKey | null> {
  const [row] = await store.query<KeyJoinRow>(
    `SELECT k.id AS id, k.org_id AS org_id, k.user_id AS user_id, k.token_hash AS token_hash, k.scopes AS scopes,
            k.all_sites AS all_sites, k.site_ids AS site_ids, k.expires_at AS expires_at, k.revoked_at AS revoked_at,
            m.all_sites AS m_all_sites, m.site_ids AS m_site_ids, o.retention_days AS retention_days
     FROM (SELECT * FROM ${store.table('api_keys')} FINAL WHERE token_hash = {h:String} AND is_deleted = 0) AS k
     INNER JOIN (SELECT * FROM ${store.table('memberships')} FINAL WHERE is_deleted = 0) AS m
       ON m.org_id = k.org_id AND m.user_id = k.user_id
     INNER JOIN (SELECT * FROM ${store.table('orgs')} FINAL WHERE is_deleted = 0) AS o ON o.id = k.org_id
     LIMIT 1`,
    { h: hash },
  );
  if (!row || !hashesEqual(row.token_hash, hash) || row.revoked_at) return null;
  return {
    principal: {
      keyId: row.id,
      orgId: row.org_id,
      userId: row.user_id,
      scopes: new Set(row.scopes),
      sites: reach(row),
      retentionDays: row.retention_days,
    },
    expiresAtMs: row.expires_at ? Date.parse(row.expires_at.replace(' ', 'T') + 'Z') : null,
  };
}

/** A key's reach is its own site list, never wider than its creator's site access. */
function reach(row: KeyJoinRow): Principal['sites'] {
  const key = row.all_sites ? null : new Set(row.site_ids);
  const member = row.m_all_sites ? null : new Set(row.m_site_ids);
  if (!key && !member) return 'all';
  if (!key) return member!;
  if (!member) return key;
  return new Set([...key].filter((s) => member.has(s)));
}

export function requireScope(p: Principal, scope: Scope | undefined): void {
  if (scope && !p.scopes.has(scope)) throw forbidden();
}

export function canReach(p: Principal, site: Site): boolean {
  return site.org_id === p.orgId && (p.sites === 'all' || p.sites.has(site.id));
}

/** A site outside reach, in another organisation, or absent: the same 403. */
export async function requireSite(repos: Repos, p: Principal, siteId: string): Promise<Site> {
  if (!isUuid(siteId)) throw forbidden();
  const id = siteId.toLowerCase();
  const site = await repos.cachedSite(id);
  if (!site || !canReach(p, site)) throw forbidden();
  return site;
}

