import { nowMs } from '../core/clock';
import { nextVersion } from '../core/ids';
import { logger } from '../core/logger';
import { serially } from '../core/serially';
import type { Leases } from '../infra/lease';
import { AppError } from '../core/errors';
import type { Params, Store } from './store';

/** A metadata row was written (put or remove). `id` is the row's `id` column when it has one. */
export interface MetaChange {
  database: string;
  table: string;
  id?: string;
}
export type MetaWriteListener = (change: MetaChange) => void | Promise<void>;

const writeListeners = new Set<MetaWriteListener>();

/**
 * Caches of metadata (the auth cache, ingest's site settings) subscribe here. A writer awaits its
 * listeners before its write returns, so a cache is invalid by the time the caller hears "done".
 * TRAP: this only works if metadata is written through MetaTable, never with store.insert directly.
 */
export function onMetaWrite(fn: MetaWriteListener): () => void {
  writeListeners.add(fn);
  return () => writeListeners.delete(fn);
}

async function notify(change: MetaChange): Promise<void> {
  await Promise.all(
    [...writeListeners].map(async (fn) => {
      try {
        await fn(change);
      } catch (err) {
        logger.warn({ err: (err as Error).message, table: change.table }, 'metadata change listener failed');
      }
    }),
  );
}

/**
 * Server mode: several processes (api replicas, the worker) edit the same rows, and a turn taken in
 * one process means nothing to another. Sharing the turns makes each one also a Redis lease on the
 * row, so an import's progress written by the worker cannot overwrite a re-sync an api process wrote
 * a moment before. While Redis is down the turns are per process again (the edit is not refused:
 * settings stay editable without Redis; the race is as rare as before).
 */
// Keyed by connection and database, as the rollup feeder is: every Store over them (dedicated()
// gives a copy) shares the turns.
const sharedTurns = new WeakMap<object, Map<string, { leases: Leases; waitMs: number }>>();

/** `waitMs`: how long an edit waits for another process's turn on its row before answering 503. */
export function shareRowTurns(store: Store, leases: Leases, waitMs = 15_000): void {
  let byDb = sharedTurns.get(store.client);
  if (!byDb) sharedTurns.set(store.client, (byDb = new Map()));
  byDb.set(store.database, { leases, waitMs });
}

async function sharedTurn<T>(store: Store, turn: string, task: () => Promise<T>): Promise<T> {
  const shared = sharedTurns.get(store.client)?.get(store.database);
  if (!shared) return task();
  const outcome = await shared.leases.run(turn, task, shared.waitMs);
  if (outcome.held) return outcome.value;
  if (outcome.why === 'redis_down') return task();
  throw new AppError(503, 'overloaded', 'Another process kept this resource busy; try again.', undefined, { 'Retry-After': '5' });
}

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
    await this.changed(row);
    return row;
  }

  async remove(row: Row): Promise<void> {
    await this.store.insert(this.name, [{ ...row, version: nextVersion(), is_deleted: 1 }]);
    await this.changed(row);
  }

  private changed(row: Row): Promise<void> {
    const id = (row as { id?: unknown }).id;
    return notify({ database: this.store.database, table: this.name, ...(typeof id === 'string' ? { id } : {}) });
  }

  async select(where = '1', params: Params = {}, tail = ''): Promise<Row[]> {
    const cols = this.columns.join(', ');
    return this.store.query<Row>(
      `SELECT ${cols} FROM ${this.store.table(this.name)} FINAL WHERE is_deleted = 0 AND (${where}) ${tail}`,
      params,
    );
  }

  /** How many live rows `where` finds (the FINAL / is_deleted rule stays here). */
  async count(where: string, params: Params = {}): Promise<number> {
    const rows = await this.store.query<{ n: number }>(
      `SELECT toUInt32(count()) AS n FROM ${this.store.table(this.name)} FINAL WHERE is_deleted = 0 AND (${where})`, params);
    return Number(rows[0]?.n ?? 0);
  }

  async one(where: string, params: Params = {}): Promise<Row | undefined> {
    return (await this.select(where, params, 'LIMIT 1'))[0];
  }

  /**
   * A read-modify-write of the row `key` names, run after every earlier one of that key has finished.
   * Rows are whole-row versions, so two edits that each read the row before the other wrote would lose
   * one change (two PATCHes of different fields, a backfill's progress over a re-sync), mint two slugs
   * for one board, or write a removed row back. `task` reads the row itself, inside its turn. Turns
   * are per process, and across processes too where the store shares them (shareRowTurns).
   */
  exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const turn = `${this.store.database}.${this.name}/${key.toLowerCase()}`;
    return serially(turn, () => sharedTurn(this.store, turn, task));
  }

  /** `edit` on the row `where` finds, in the turn of `key`; undefined when there is no such row. */
  editOne<T>(key: string, where: string, params: Params, edit: (row: Row) => Promise<T>): Promise<T | undefined> {
    return this.exclusive(key, async () => {
      const row = await this.one(where, params);
      return row === undefined ? undefined : edit(row);
    });
  }

  // Rows a site owns by id (funnels, alerts, notes): site and id both bound, so another site's id finds nothing.

  ofSite(siteId: string, id: string): Promise<Row | undefined> {
    return this.one(SITE_ROW, { s: siteId, id });
  }

  editOfSite<T>(siteId: string, id: string, edit: (row: Row) => Promise<T>): Promise<T | undefined> {
    return this.editOne(id, SITE_ROW, { s: siteId, id }, edit);
  }

  /** true, or undefined when the site has no such row. */
  removeOfSite(siteId: string, id: string): Promise<true | undefined> {
    return this.editOfSite(siteId, id, async (row) => {
      await this.remove(row);
      return true as const;
    });
  }
}

const SITE_ROW = 'site_id = {s:UUID} AND id = {id:UUID}';

/** ClickHouse DateTime64 JSON text ('2026-01-02 03:04:05.678', UTC) to ISO 8601. */
export function chToIso(v: string | null | undefined): string | null {
  if (!v) return null;
  return v.replace(' ', 'T') + (v.includes('.') ? 'Z' : '.000Z');
}

/** A DateTime64(3) column's value as epoch milliseconds. */
export const chToMs = (v: string): number => Date.parse(chToIso(v)!);

/** An ISO timestamp or Date in the form DateTime64(3) columns take. */
export function isoToCh(v: Date | string): string {
  return new Date(v).toISOString().replace('T', ' ').replace('Z', '');
}

/** The service clock's now (core/clock: tests freeze it) as DateTime64(3) text. */
export const nowCh = (): string => isoToCh(new Date(nowMs()));
