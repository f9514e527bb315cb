import { nextVersion } from '../core/ids';
import type { Params, Store } from './store';

/**
 * A metadata table: ReplacingMergeTree(version, is_deleted) read with FINAL. `put` writes the whole
 * row with a fresh version (the newest wins); `remove` writes it back with is_deleted = 1.
 * `where` fragments are trusted SQL written in this codebase; every value in them is a bound param.
 */
export class MetaTable<Row extends object> {
  constructor(
    private readonly store: Store,
    readonly name: string,
    private readonly columns: readonly (keyof Row & string)[],
  ) {}

  async put(row: Row): Promise<Row> {
    await this.store.insert(this.name, [{ ...row, version: nextVersion(), is_deleted: 0 }]);
    return row;
  }

  async remove(row: Row): Promise<void> {
    await this.store.insert(this.name, [{ ...row, version: nextVersion(), is_deleted: 1 }]);
  }

  async select(where = '1', params: Params = {}, tail = ''): Promise<Row[]> {
    const cols = this.columns.join(', ');
    return this.store.query<Row>(
      `SELECT ${cols} FROM ${this.store.table(this.name)} FINAL WHERE is_deleted = 0 AND (${where}) ${tail}`,
      params,
    );
  }

  async one(where: string, params: Params = {}): Promise<Row | undefined> {
    return (await this.select(where, params, 'LIMIT 1'))[0];
  }
}

/** ClickHouse DateTime64 JSON text ('2026-01-02 03:04:05.678', UTC) to ISO 8601. */
export function chToIso(v: string | null | undefined): string | null {
  if (!v) return null;
  return v.replace(' ', 'T') + (v.includes('.') ? 'Z' : '.000Z');
}

/** An ISO timestamp or Date in the form DateTime64(3) columns take. */
export function isoToCh(v: Date | string): string {
  return new Date(v).toISOString().replace('T', ' ').replace('Z', '');
}
