/** Shared domain types: the shapes every layer agrees on. */

export const SCOPE_RESOURCES = [
  'analytics', 'sites', 'settings', 'goals', 'funnels', 'notes', 'alerts', 'team', 'revenue',
] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export type Scope = `${ScopeResource}:read` | `${ScopeResource}:write`;

/** Analytics has no write scope (traffic is measured, never set). */
export const ALL_SCOPES: readonly Scope[] = SCOPE_RESOURCES.flatMap((r) =>
  r === 'analytics' ? [`${r}:read` as Scope] : [`${r}:read` as Scope, `${r}:write` as Scope],
);

export const DEFAULT_SCOPES: readonly Scope[] = ['analytics:read'];

export type Role = 'owner' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export type SessionStrategy = 'first_party_cookie' | 'salted_hash' | 'cookieless_strict';
export const SESSION_STRATEGIES: readonly SessionStrategy[] = ['first_party_cookie', 'salted_hash', 'cookieless_strict'];

/** Who is calling: resolved from the key before any handler runs. */
export interface Principal {
  keyId: string;
  orgId: string;
  userId: string;
  scopes: ReadonlySet<Scope>;
  /** 'all' = every site of the organisation, including ones added later. */
  sites: 'all' | ReadonlySet<string>;
  retentionDays: number;
}

export interface Site {
  id: string;
  org_id: string;
  domain: string;
  name: string;
  timezone: string;
  currency: string;
  active: boolean;
  excluded_paths: string[];
  allowed_hostnames: string[];
  excluded_hostnames: string[];
  excluded_countries: string[];
  session_strategy: SessionStrategy;
  created_at: string;
  updated_at: string;
}
