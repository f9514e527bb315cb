import type { Store } from '../clickhouse/store';
import { logger } from '../core/logger';

/**
 * View counters of the public pages (share boards and widget cards), per slug. Views collect in
 * memory and one insert a second writes them (public_views is a SummingMergeTree, so nothing is
 * rewritten); reads add what is still pending, so a count is exact the moment after a view.
 */
export type PublicKind = 'share' | 'widget';

export class ViewCounter {
  private pending = new Map<string, { kind: PublicKind; slug: string; views: number }>();
  /** Being written: still counted by reads until the insert has landed. */
  private flushing = new Map<string, { kind: PublicKind; slug: string; views: number }>();
  private inflight: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly store: Store, intervalMs = 1000) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  count(kind: PublicKind, slug: string): void {
    const key = `${kind}\u0000${slug}`;
    const entry = this.pending.get(key) ?? { kind, slug, views: 0 };
    entry.views++;
    this.pending.set(key, entry);
  }

  async read(kind: PublicKind, slug: string): Promise<number> {
    const [row] = await this.store.query<{ views: number }>(
      `SELECT toUInt64(sum(views)) AS views FROM ${this.store.table('public_views')} WHERE kind = {k:String} AND slug = {slug:String}`,
      { k: kind, slug },
    );
    const key = `${kind}\u0000${slug}`;
    return (row?.views ?? 0) + (this.pending.get(key)?.views ?? 0) + (this.flushing.get(key)?.views ?? 0);
  }

  async flush(): Promise<void> {
    while (this.inflight) await this.inflight;
    if (this.pending.size === 0) return;
    this.flushing = this.pending;
    this.pending = new Map();
    this.inflight = this.store
      .insert('public_views', [...this.flushing.values()])
      .catch((err: Error) => logger.warn({ err: err.message }, 'view count write failed'))
      .finally(() => {
        this.flushing = new Map();
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
