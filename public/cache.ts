import { nowMs } from '../core/clock';

/**
 * A short-lived memo for the public feeds. A board or an embedded card can be opened by many people
 * at once; each load fans out into several reports, so identical requests within a few seconds
 * share one computation. Keys carry the board/widget's whole settings row, so a settings change is
 * seen at once. Failures are not kept. Entries age by the service clock (core/clock), the clock the
 * board's window is rounded by, so a memo period and the window it memoises are one.
 */
export class FeedCache {
  private readonly entries = new Map<string, { expires: number; value: Promise<unknown> }>();

  constructor(private readonly ttlMs: number, private readonly maxEntries = 200) {}

  /** Whether `key` would be answered from the memo right now. */
  has(key: string): boolean {
    const hit = this.entries.get(key);
    return !!hit && hit.expires > nowMs();
  }

  get<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const now = nowMs();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value as Promise<T>;
    if (this.entries.size >= this.maxEntries) this.evict(now);
    const value = compute();
    this.entries.set(key, { expires: now + this.ttlMs, value });
    value.catch(() => this.entries.delete(key));
    return value;
  }

  private evict(now: number): void {
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
    // Still full: drop the oldest insertions (Map keeps insertion order).
    for (const k of this.entries.keys()) {
      if (this.entries.size < this.maxEntries) break;
      this.entries.delete(k);
    }
  }
}
