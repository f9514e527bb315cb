import { nextVersion } from '../core/ids';
import type { Params, Store } from './store';

/**
 * Deletes rows of a ReplacingMergeTree(version, ...) table that has an `is_deleted` column by writing
 * them back as tombstones (is_deleted = 1) at a newer version, in one INSERT ... SELECT over the rows
 * read FINAL. Every reader reads FINAL and skips tombstones, so the rows are gone when the statement
 * returns, on one node or a cluster alike (no mutation to wait for). `columns` are all the table's
 * columns but `version` and `is_deleted`; `where` picks the live rows to delete, with bound params.
 */
export async function tombstone(store: Store, table: string, columns: readonly string[], where: string, params: Params): Promise<void> {
  const name = store.table(table);
  const cols = columns.join(', ');
  await store.command(
    `INSERT INTO ${name} (${cols}, version, is_deleted) SELECT ${cols}, {tombstone_version:UInt64}, 1 FROM ${name} FINAL
     WHERE is_deleted = 0 AND (${where})`,
    { ...params, tombstone_version: nextVersion() });
}
