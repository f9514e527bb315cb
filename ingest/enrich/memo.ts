/**
 * A bounded memo for pure per-event derivations (page fields of a URL, traffic source of a referrer):
 * real traffic repeats a few thousand pages and referrers, so most events skip the parsing. Oldest
 * entry out first (Map insertion order); no reordering on a hit, which keeps a hit to one lookup.
 * Values are shared between events: callers copy fields out, never mutate them.
 */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V): V {
    if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
    return value;
  }
}
