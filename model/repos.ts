import { domainToUnicode } from 'node:url';
import { MetaTable, chToIso, isoToCh, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { ALL_SCOPES, type Role, type Scope, type SessionStrategy, type Site } from '../core/domain';
import { newId } from '../core/ids';
import { nowMs } from '../core/clock';
import { conflict, notFound } from '../core/errors';
import type { AuthCache, GenerationSource } from './auth-cache';
import { generateToken, hashToken } from './keys';

/** Row shapes as stored. Booleans are UInt8, timestamps DateTime64 text. */
export interface OrgRow { id: string; name: string; retention_days: number; created_at: string }
export interface UserRow { id: string; email: string; created_at: string }
export interface MembershipRow {
  org_id: string; user_id: string; role: Role; all_sites: number; site_ids: string[]; created_at: string;
}
export interface SiteRow {
  id: string; org_id: string; domain: string; name: string; timezone: string; currency: string; active: number;
  excluded_paths: string[]; allowed_hostnames: string[]; excluded_hostnames: string[]; excluded_countries: string[];
  session_strategy: SessionStrategy; created_at: string; updated_at: string;
}
export interface KeyRow {
  id: string; org_id: string; user_id: string; name: string; token_hash: string; token_hint: string;
  scopes: Scope[]; all_sites: number; site_ids: string[]; expires_at: string | null; revoked_at: string | null;
  created_at: string;
}

const cols = <T>(...c: (keyof T & string)[]) => c;
export function siteFromRow(r: SiteRow): Site {
  return { ...r, active: !!r.active, created_at: chToIso(r.created_at)!, updated_at: chToIso(r.updated_at)! };
}

/** Granting a write scope grants its read scope too. */
export function expandScopes(scopes: readonly Scope[]): Scope[] {
  const out = new Set<Scope>();
  for (const s of scopes) {
    out.add(s);
    if (s.endsWith(':write')) out.add(s.replace(':write', ':read') as Scope);
  }
  return ALL_SCOPES.filter((s) => out.has(s));
}

type SiteListener = (site: Site) => void;
const siteListeners = new Set<SiteListener>();
/** Ingest subscribes to drop its cached settings the moment a site changes. */
export function onSiteChange(fn: SiteListener): () => void {
  siteListeners.add(fn);
  return () => siteListeners.delete(fn);
}

export class Repos {
  readonly orgs: MetaTable<OrgRow>;
  readonly users: MetaTable<UserRow>;
  readonly memberships: MetaTable<MembershipRow>;
  readonly sites: MetaTable<SiteRow>;
  readonly keys: MetaTable<KeyRow>;
  /** Set by the runtime: makes site lookups on the request path cheap (see auth-cache.ts). */
  authCache?: AuthCache;
  /**
   * Set by the runtime in server mode: the metadata generation other processes bump after their
   * writes (infra/redis-generation.ts). Ingest's site cache reads it so another process's settings
   * save applies from the next event here too.
   */
  sharedGeneration?: GenerationSource;

  constructor(readonly store: Store) {
    this.orgs = new MetaTable(store, 'orgs', cols<OrgRow>('id', 'name', 'retention_days', 'created_at'));
    this.users = new MetaTable(store, 'users', cols<UserRow>('id', 'email', 'created_at'));
    this.memberships = new MetaTable(store, 'memberships',
      cols<MembershipRow>('org_id', 'user_id', 'role', 'all_sites', 'site_ids', 'created_at'));
    this.sites = new MetaTable(store, 'sites', cols<SiteRow>('id', 'org_id', 'domain', 'name', 'timezone', 'currency',
      'active', 'excluded_paths', 'allowed_hostnames', 'excluded_hostnames', 'excluded_countries', 'session_strategy',
      'created_at', 'updated_at'));
    this.keys = new MetaTable(store, 'api_keys', cols<KeyRow>('id', 'org_id', 'user_id', 'name', 'token_hash',
      'token_hint', 'scopes', 'all_sites', 'site_ids', 'expires_at', 'revoked_at', 'created_at'));
  }

  createOrg(name: string, retentionDays = 1095): Promise<OrgRow> {
    return this.orgs.put({ id: newId(), name, retention_days: retentionDays, created_at: nowCh() });
  }

  getOrg(id: string) {
    return this.orgs.one('id = {id:UUID}', { id });
  }

  /** A new member (email lower-cased); 409 when one of the organisation's members has that email. In the team's turn. */
  createUser(orgId: string, email: string, role: Role): Promise<UserRow & { role: Role }> {
    const wanted = email.toLowerCase();
    return this.inTeamTurn(orgId, async () => {
      const memberIds = (await this.memberships.select('org_id = {o:UUID}', { o: orgId })).map((m) => m.user_id);
      const taken = memberIds.length > 0 && (await this.users.one('email = {e:String} AND id IN {ids:Array(UUID)}', { e: wanted, ids: memberIds }));
      if (taken) throw conflict('conflict', `${wanted} is already a member of this organisation`);
      const user = await this.users.put({ id: newId(), email: wanted, created_at: nowCh() });
      await this.memberships.put({ org_id: orgId, user_id: user.id, role, all_sites: 1, site_ids: [], created_at: nowCh() });
      return { ...user, role };
    });
  }

  /**
   * A change to who is in the organisation, or to what a member reaches, in the organisation's turn:
   * each reads the memberships it depends on inside it. Removing a member while their site access
   * was being set wrote the member back (the PATCH had read the row before the removal and wrote it
   * whole after), and a key could then be made for them again; two owners removed at once each saw
   * the other still there. createUser, createKey and removeUser take it themselves.
   */
  inTeamTurn<T>(orgId: string, task: () => Promise<T>): Promise<T> {
    return this.memberships.exclusive(`org:${orgId}`, task);
  }

  membership(orgId: string, userId: string) {
    return this.memberships.one('org_id = {o:UUID} AND user_id = {u:UUID}', { o: orgId, u: userId });
  }

  /** The organisation's owners (they reach every site). */
  owners(orgId: string): Promise<MembershipRow[]> {
    return this.memberships.select("org_id = {o:UUID} AND role = 'owner'", { o: orgId });
  }

  /** A new site; 409 when another site holds the domain. */
  createSite(input: { org_id: string; domain: string; name?: string; timezone?: string; currency?: string }): Promise<Site> {
    const id = newId();
    const domain = input.domain.toLowerCase();
    return this.claimingDomain(id, domain, async () => {
      const at = nowCh();
      const row: SiteRow = {
        // The name is read by people: a Unicode domain stored as punycode is named as it is written.
        id, org_id: input.org_id, domain, name: input.name ?? domainToUnicode(domain), timezone: input.timezone ?? 'UTC',
        currency: (input.currency ?? 'USD').toUpperCase(), active: 1, excluded_paths: [], allowed_hostnames: [domain],
        excluded_hostnames: [], excluded_countries: [], session_strategy: 'salted_hash', created_at: at, updated_at: at,
      };
      await this.sites.put(row);
      return siteFromRow(row);
    });
  }

  /**
   * `write` (which gives site `siteId` the domain) in the domain's turn, refused with 409 when another
   * site holds it. Domains are global: the collection endpoint finds a site by its domain alone, so
   * two concurrent creations or renames to one domain must not both pass the check (shared across
   * processes in server mode).
   */
  claimingDomain<T>(siteId: string, domain: string, write: () => Promise<T>): Promise<T> {
    const wanted = domain.toLowerCase();
    return this.sites.exclusive(`domain:${wanted}`, async () => {
      const holder = await this.siteByDomain(wanted);
      if (holder && holder.id !== siteId) throw conflict('conflict', `domain: a site for "${wanted}" already exists`);
      return write();
    });
  }

  async getSite(id: string): Promise<Site | undefined> {
    const r = await this.sites.one('id = {id:UUID}', { id });
    return r && siteFromRow(r);
  }

  /** getSite through the auth cache when there is one (emptied by every metadata write). */
  cachedSite(id: string): Promise<Site | undefined> {
    return this.authCache ? this.authCache.site(id, () => this.getSite(id)) : this.getSite(id);
  }

  async siteByDomain(domain: string): Promise<Site | undefined> {
    const r = await this.sites.one('domain = {d:String}', { d: domain.toLowerCase() });
    return r && siteFromRow(r);
  }

  async listSites(orgId: string): Promise<Site[]> {
    return (await this.sites.select('org_id = {o:UUID}', { o: orgId }, 'ORDER BY created_at, id')).map(siteFromRow);
  }

  /**
   * The site as `change` makes it from its stored row, in that row's turn (MetaTable.exclusive), so
   * two settings PATCHes of different fields both land. `change` may throw to refuse the edit.
   */
  editSite(id: string, change: (site: Site) => Site): Promise<Site> {
    return this.sites.exclusive(id, async () => {
      const site = await this.getSite(id);
      if (!site) throw notFound('site');
      return this.saveSite(change(site));
    });
  }

  async saveSite(site: Site): Promise<Site> {
    const updated = { ...site, updated_at: new Date(nowMs()).toISOString() };
    await this.sites.put({
      ...updated, active: site.active ? 1 : 0, created_at: isoToCh(site.created_at), updated_at: isoToCh(updated.updated_at),
    });
    for (const fn of siteListeners) fn(updated);
    return updated;
  }

  /**
   * A new key for a member; undefined when the user is not (or no longer) a member. In the team's
   * turn: a user remove running meanwhile revokes the keys it lists, so this one must exist before it
   * lists them or see the member gone.
   */
  createKey(input: {
    org_id: string; user_id: string; name?: string; scopes?: readonly Scope[]; site_ids?: string[]; expires_at?: string | null;
  }): Promise<{ row: KeyRow; token: string } | undefined> {
    return this.inTeamTurn(input.org_id, async () => (await this.membership(input.org_id, input.user_id) ? this.putKey(input) : undefined));
  }

  private async putKey(input: Parameters<Repos['createKey']>[0]): Promise<{ row: KeyRow; token: string }> {
    const token = generateToken();
    const siteIds = [...new Set(input.site_ids ?? [])];
    const row: KeyRow = {
      id: newId(), org_id: input.org_id, user_id: input.user_id, name: input.name ?? '', token_hash: hashToken(token),
      token_hint: token.slice(0, 8), scopes: expandScopes(input.scopes?.length ? input.scopes : ['analytics:read']),
      all_sites: siteIds.length ? 0 : 1, site_ids: siteIds, expires_at: input.expires_at ? isoToCh(input.expires_at) : null,
      revoked_at: null, created_at: nowCh(),
    };
    await this.keys.put(row);
    return { row, token };
  }

  getKey(id: string) {
    return this.keys.one('id = {id:UUID}', { id });
  }

  async revokeKey(row: KeyRow): Promise<void> {
    if (!row.revoked_at) await this.keys.put({ ...row, revoked_at: nowCh() });
  }

  /**
   * Removing a member revokes their keys; notes they wrote stay, with the author shown as null. The
   * organisation's last owner cannot be removed (409 last_owner): nobody could then manage its team.
   */
  removeUser(orgId: string, userId: string): Promise<boolean> {
    return this.inTeamTurn(orgId, async () => {
      const m = await this.membership(orgId, userId);
      if (!m) return false;
      if (m.role === 'owner') {
        const owners = await this.owners(orgId);
        if (owners.length <= 1) throw conflict('last_owner', 'This user is the organisation\'s last owner; add another owner first (user create --role owner).');
      }
      for (const k of await this.keys.select('org_id = {o:UUID} AND user_id = {u:UUID}', { o: orgId, u: userId })) {
        await this.revokeKey(k);
      }
      await this.memberships.remove(m);
      return true;
    });
  }
}
