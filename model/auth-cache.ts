import type { Principal, Site } from '../core/domain';

/**
 * Caches what every API request needs before its handler runs (the key's principal, the site) so
 * authentication costs microseconds instead of two FINAL queries. It must never serve a revoked or
 * expired key or a stale reach, so it is invalidated, not aged:
 *
 * - Every metadata write that can change a principal or a site (orgs, users, memberships, api_keys,
 *   sites) calls `invalidate()` before the write returns (MetaTable awaits its listeners).
 * - Other processes learn of it through a shared generation (a Redis counter in server mode): each
 *   lookup first reads the generation and drops everything when it moved. When the generation cannot
 *   be read (Redis down), the cache is bypassed and every lookup goes to ClickHouse.
 * - In embedded mode there is one process by construction (chDB), so the generation is local.
 * - Loads that raced with an invalidation are not stored (the epoch check), so a read that began
 *   before a revoke can never re-insert the old principal after it.
 * - Expiry is checked on every hit against the clock; the TTL only bounds memory and any missed
 *   invalidation (e.g. a Redis partition between processes).
 */
export interface GenerationSource {
  /** The shared generation, or null when it cannot be known (then the cache is bypassed). */
  current(): Promise<string | null>;
  /** Announce a change to every process. */
  bump(): Promise<void>;
}

/** One process owns all writes (embedded mode): the generation is a local counter. */
export class LocalGeneration implements GenerationSource {
  private n = 0;
  current(): Promise<string> {
    return Promise.resolve(String(this.n));
  }
  bump(): Promise<void> {
    this.n++;
    return Promise.resolve();
  }
}

export interface ResolvedKey {
  principal: Principal;
  /** Epoch ms, null when the key never expires. */
  expiresAtMs: number | null;
}

/** The metadata tables a principal or a site is built from. */
export const AUTH_TABLES: ReadonlySet<string> = new Set(['orgs', 'users', 'memberships', 'api_keys', 'sites']);

interface Entry<T> {
  value: T;
  at: number;
}

export class AuthCache {
  private readonly keys = new Map<string, Entry<ResolvedKey | null>>();
  private readonly sites = new Map<string, Entry<Site | null>>();
  private seen: string | null = null;
  private epoch = 0;

  constructor(
    private readonly generation: GenerationSource,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 60_000, maxEntries: 10_000 },
  ) {}

  /** A key by token hash; null (unknown or revoked) is cached too: neither can become valid. */
  key(hash: string, load: () => Promise<ResolvedKey | null>): Promise<ResolvedKey | null> {
    return this.through(this.keys, hash, load);
  }

  /**
   * A key this process already resolved and may still serve (same generation, within the TTL), or
   * undefined: nothing is loaded or stored. For addresses refused lookups (api/rate-limit.ts).
   */
  async known(hash: string): Promise<ResolvedKey | null | undefined> {
    // The map first: a flood of made-up tokens from a refused address costs no generation read.
    if (!this.fresh(this.keys, hash)) return undefined;
    return (await this.usable()) ? this.fresh(this.keys, hash)?.value : undefined;
  }

  /** A site by id; callers get a copy so they cannot alter the cached one. */
  async site(id: string, load: () => Promise<Site | undefined>): Promise<Site | undefined> {
    const s = await this.through(this.sites, id, async () => (await load()) ?? null);
    return s ? structuredClone(s) : undefined;
  }

  /** Drop everything here, then tell the other processes. */
  async invalidate(): Promise<void> {
    this.clear();
    await this.generation.bump();
  }

  private clear(): void {
    this.epoch++;
    this.keys.clear();
    this.sites.clear();
  }

  /** Whether entries may be served: the generation is known, and everything older than it is dropped. */
  private async usable(): Promise<boolean> {
    const gen = await this.generation.current();
    if (gen === null) {
      // Changes made while the generation was unknown were not announced: start over when it is back.
      this.seen = null;
      return false;
    }
    if (gen !== this.seen) {
      this.clear();
      this.seen = gen;
    }
    return true;
  }

  private fresh<T>(map: Map<string, Entry<T>>, id: string): Entry<T> | undefined {
    const hit = map.get(id);
    return hit && Date.now() - hit.at < this.opts.ttlMs ? hit : undefined;
  }

  private async through<T>(map: Map<string, Entry<T>>, id: string, load: () => Promise<T>): Promise<T> {
    if (!(await this.usable())) return load();
    const hit = this.fresh(map, id);
    if (hit) return hit.value;
    const epoch = this.epoch;
    const value = await load();
    if (epoch === this.epoch) {
      map.delete(id);
      if (map.size >= this.opts.maxEntries) map.delete(map.keys().next().value as string);
      map.set(id, { value, at: Date.now() });
    }
    return value;
  }
}
