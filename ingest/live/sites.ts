import type { Site } from '../../core/domain';
import type { GenerationSource } from '../../model/auth-cache';
import type { Repos } from '../../model/repos';
import { onSiteChange } from '../../model/repos';
import { compileExclusions, type Exclusions } from './exclusions';

/**
 * Domain -> site (with compiled exclusions) for the hot path. A saved settings change replaces the
 * entry at once through Repos.onSiteChange, so it applies from the next event. In server mode another
 * process may have saved it: every lookup there first waits for a read of the shared metadata
 * generation (Repos.sharedGeneration, bumped by every site save) that began after the lookup did, and
 * the cache is emptied when the generation moved. Lookups arriving together share one read, so it
 * costs one Redis GET per burst, not per event. (Before, the entries only expired after 30 s: an
 * excluded path saved through one api process was still collected by the others meanwhile.) While
 * Redis is down the generation is unknown and entries expire after that short time, as before.
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
  /** Bumped whenever entries are dropped: a load that began before must not store what it read. */
  private epoch = 0;
  private seen: string | null = null;
  private reading: Promise<void> | null = null;
  private nextRead: Promise<void> | null = null;

  constructor(
    private readonly repos: Repos,
    private readonly shared: GenerationSource | undefined = repos.sharedGeneration,
  ) {
    this.unsubscribe = onSiteChange((site) => this.replace(site));
  }

  /**
   * The site of a domain (null: unknown or inactive). A cached answer, known or unknown, is returned
   * as is, without a promise: that is the per-event case in embedded mode. Concurrent misses share
   * one load. Server mode: after a read of the shared generation (see the class comment).
   */
  lookup(domain: string): LiveSite | null | Promise<LiveSite | null> {
    if (this.shared) return this.generationRead().then(() => this.cachedOrLoad(domain));
    return this.cachedOrLoad(domain);
  }

  /**
   * Resolves after a generation read that began after this call: the read under way may have been
   * sent before the save this lookup's event follows, so a caller arriving during it waits for the next.
   */
  private generationRead(): Promise<void> {
    if (this.nextRead) return this.nextRead;
    if (!this.reading) return (this.reading = this.readGeneration().finally(() => (this.reading = null)));
    return (this.nextRead = this.reading.then(() => {
      this.nextRead = null;
      return this.generationRead();
    }));
  }

  private async readGeneration(): Promise<void> {
    const gen = await this.shared!.current();
    // Unknown (Redis down or stalled: RedisGeneration gives up after 500 ms): entries age out by their TTL; saves made meanwhile were not announced, so
    // the cache starts over once the generation is known again.
    if (gen !== null && gen !== this.seen) this.drop();
    this.seen = gen;
  }

  private drop(): void {
    this.epoch++;
    this.cache.clear();
    this.pending.clear();
  }

  private cachedOrLoad(domain: string): LiveSite | null | Promise<LiveSite | null> {
    const hit = this.cache.get(domain);
    if (hit && hit.expiresAt > Date.now()) return hit.live;
    let p = this.pending.get(domain);
    if (!p) {
      const load: Promise<LiveSite | null> = this.load(domain).finally(() => {
        // Not a newer load's entry (drop() and replace() forget loads under way).
        if (this.pending.get(domain) === load) this.pending.delete(domain);
      });
      p = load;
      this.pending.set(domain, p);
    }
    return p;
  }

  private async load(domain: string): Promise<LiveSite | null> {
    const epoch = this.epoch;
    const site = await this.repos.siteByDomain(domain);
    const live = site && site.active ? { site, exclusions: compileExclusions(site) } : null;
    if (epoch === this.epoch) this.put(domain, live);
    return live;
  }

  private put(domain: string, live: LiveSite | null) {
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(domain, { live, expiresAt: Date.now() + (live ? KNOWN_TTL_MS : UNKNOWN_TTL_MS) });
  }

  /** A saved site: drop entries naming it (its domain may have changed) and file it under its domain. */
  private replace(site: Site) {
    // A load under way read the row before this save: it must not file the old settings after it.
    this.epoch++;
    this.pending.clear();
    for (const [domain, entry] of this.cache) if (entry.live?.site.id === site.id) this.cache.delete(domain);
    this.put(site.domain, site.active ? { site, exclusions: compileExclusions(site) } : null);
  }

  close() {
    this.unsubscribe();
  }
}
