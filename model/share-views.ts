import type { Store } from '../clickhouse/store';
import { logger } from '../core/logger';

/**
 * View counters of the public pages (share boards and widget cards), per slug. Views collect in
 * memory and one insert a second writes them (public_views is a SummingMergeTree, so nothing is
 * rewritten); reads add what is still pending, so a count is exact the moment after a view.
 *
 * A read and a write never overlap: a read waits for a write under way, and a write waits for the
 * reads under way. Overlapping, a read's SELECT could see a batch whose insert had just committed and
 * then add that batch again as still being written (its ack not yet in), counting it twice.
 */
export type PublicKind = 'share' | 'widget';

export class ViewCounter {
  private pending = new Map<string, { kind: PublicKind; slug: string; views: number }>();
  private inflight: Promise<void> | null = null;
  /** Reads whose SELECT is under way, and the writes waiting for them to finish. */
  private readers = 0;
  private readersGone: (() => void)[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly store: Store, intervalMs = 1000) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  count(kind: PublicKind, slug: string, views = 1): void {
    const key = `${kind}\u0000${slug}`;
    const entry = this.pending.get(key) ?? { kind, slug, views: 0 };
    entry.views += views;
    this.pending.set(key, entry);
  }

  async read(kind: PublicKind, slug: string): Promise<number> {
    while (this.inflight) await this.inflight;
    // From here to the SELECT's answer no write starts: what is stored and what is pending are apart.
    this.readers++;
    try {
      const [row] = await this.store.query<{ views: number }>(
        `SELECT toUInt64(sum(views)) AS views FROM ${this.store.table('public_views')} WHERE kind = {k:String} AND slug = {slug:String}`,
        { k: kind, slug },
      );
      return (row?.views ?? 0) + (this.pending.get(`${kind}\u0000${slug}`)?.views ?? 0);
    } finally {
      if (--this.readers === 0) for (const go of this.readersGone.splice(0)) go();
    }
  }

  async flush(): Promise<void> {
    while (this.inflight || this.readers > 0) {
      if (this.inflight) await this.inflight;
      else await new Promise<void>((resolve) => this.readersGone.push(resolve));
    }
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.inflight = this.store
      .insert('public_views', batch)
      // Not written: back to pending, so reads keep counting them and the next write tries again.
      .catch((err: Error) => {
        logger.warn({ err: err.message }, 'view count write failed');
        for (const e of batch) this.count(e.kind, e.slug, e.views);
      })
      .finally(() => {
        this.inflight = null;
      });
    await this.inflight;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

const counters = new WeakMap<Store, ViewCounter>();

/** One counter per store (per running service), shared by the public pages and the API routes. */
export function viewCounter(store: Store): ViewCounter {
  let c = counters.get(store);
  if (!c) {
    c = new ViewCounter(store);
    counters.set(store, c);
  }
  return c;
}
