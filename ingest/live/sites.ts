import type { Site } from '../../core/domain';
import type { Repos } from '../../model/repos';
import { onSiteChange } from '../../model/repos';
import { compileExclusions, type Exclusions } from './exclusions';

/**
 * Domain -> site (with compiled exclusions) for the hot path. A saved settings change replaces the
 * entry at once through Repos.onSiteChange, so it applies from the next event; entries also expire
 * after a short time, which bounds staleness when another process saved the change (server mode).
 * Unknown domains are remembered briefly so a flood of junk domains does not reach ClickHouse per
 * event. Inactive sites count as unknown.
 */
export interface LiveSite {
  site: Site;
  exclusions: Exclusions;
}

const KNOWN_TTL_MS = 30_000;
const UNKNOWN_TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;

export class SiteDirectory {
  private cache = new Map<string, { live: LiveSite | null; expiresAt: number }>();
  private pending = new Map<string, Promise<LiveSite | null>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly repos: Repos) {
    this.unsubscribe = onSiteChange((site) => this.replace(site));
  }

  /**
   * The site of a domain (null: unknown or inactive). A cached answer, known or unknown, is returned
   * as is, without a promise: that is the per-event case. Concurrent misses share one load.
   */
  lookup(domain: string): LiveSite | null | Promise<LiveSite | null> {
    const hit = this.cache.get(domain);
    if (hit && hit.expiresAt > Date.now()) return hit.live;
    let p = this.pending.get(domain);
    if (!p) {
      p = this.load(domain).finally(() => this.pending.delete(domain));
      this.pending.set(domain, p);
    }
    return p;
  }

  private async load(domain: string): Promise<LiveSite | null> {
    const site = await this.repos.siteByDomain(domain);
    const live = site && site.active ? { site, exclusions: compileExclusions(site) } : null;
    this.put(domain, live);
    return live;
  }

  private put(domain: string, live: LiveSite | null) {
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(domain, { live, expiresAt: Date.now() + (live ? KNOWN_TTL_MS : UNKNOWN_TTL_MS) });
  }

  /** A saved site: drop entries naming it (its domain may have changed) and file it under its domain. */
  private replace(site: Site) {
    for (const [domain, entry] of this.cache) if (entry.live?.site.id === site.id) this.cache.delete(domain);
    this.put(site.domain, site.active ? { site, exclusions: compileExclusions(site) } : null);
  }

  close() {
    this.unsubscribe();
  }
}
