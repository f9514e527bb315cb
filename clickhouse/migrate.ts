import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../core/paths';
import { logger } from '../core/logger';
import type { Leases } from '../infra/lease';
import { renderMigration, type RenderTarget } from './render';
import type { Store } from './store';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE_RE = /^(\d{4})_([\w-]+)\.sql$/;

/** Numbered SQL files under clickhouse/migrations, in order. */
export function loadMigrations(dir = path.join(projectRoot(), 'clickhouse', 'migrations')): Migration[] {
  const all = readdirSync(dir)
    .map((f) => ({ f, m: FILE_RE.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
    .map(({ f, m }) => ({ version: Number(m[1]), name: m[2], sql: readFileSync(path.join(dir, f), 'utf8') }))
    .sort((a, b) => a.version - b.version);
  // TRAP: two branches picking the same number would silently skip one file once the other is recorded.
  const clash = all.find((m, i) => i > 0 && all[i - 1].version === m.version);
  if (clash) throw new Error(`two migrations share number ${clash.version}: give each branch its own range`);
  return all;
}

/** The table that records applied migrations; rendered like any migration (replicated in cluster mode). */
export const SCHEMA_MIGRATIONS_SQL = `CREATE TABLE IF NOT EXISTS {db}.schema_migrations {on_cluster}
(
    version UInt32, name String, applied_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY version;`;

/** Every statement a fresh database receives, in order: what the golden DDL test pins. */
export function renderAll(target: RenderTarget, migrations = loadMigrations()): string[] {
  const onCluster = target.cluster ? ` ON CLUSTER ${target.cluster}` : '';
  return [
    `CREATE DATABASE IF NOT EXISTS ${target.database}${onCluster}`,
    ...renderMigration(SCHEMA_MIGRATIONS_SQL, target),
    ...migrations.flatMap((m) => renderMigration(m.sql, target)),
  ];
}

/** Apply every migration not yet recorded in schema_migrations; each is applied once. */
export async function migrate(store: Store, migrations = loadMigrations()): Promise<number[]> {
  const target: RenderTarget = { database: store.database, cluster: store.cluster };
  for (const stmt of renderAll(target, [])) await store.command(stmt);
  const done = new Set(
    (await store.query<{ version: number }>(`SELECT version FROM ${store.table('schema_migrations')} FINAL`)).map((r) => r.version),
  );
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const stmt of renderMigration(m.sql, target)) await store.command(stmt);
    await store.insert('schema_migrations', [{ version: m.version, name: m.name, applied_at: new Date().toISOString() }]);
    logger.info({ version: m.version, name: m.name }, 'migration applied');
    applied.push(m.version);
  }
  return applied;
}

/** How long a starting process waits for another one's migrations before it gives up starting. */
const MIGRATION_WAIT_MS = 5 * 60_000;

/**
 * `migrate`, one process at a time where several share the database (server mode). Processes started
 * together (api replicas and the worker of one deployment) each read schema_migrations before any had
 * recorded a version, so each applied every migration: every version was recorded two or three
 * times, and the DDL ran concurrently on the same tables (a data migration such as 0400's INSERT ran
 * once per process). Under a Redis lease the later process finds the versions recorded and applies
 * nothing. Without Redis the processes migrate as before (the statements are idempotent), logged.
 */
export async function migrateShared(store: Store, leases: Leases | null, migrations = loadMigrations(), waitMs = MIGRATION_WAIT_MS): Promise<number[]> {
  if (!leases) return migrate(store, migrations);
  const outcome = await leases.run(store.database, () => migrate(store, migrations), waitMs);
  if (outcome.held) return outcome.value;
  if (outcome.why === 'busy') {
    throw new Error(`CLICKHOUSE_DATABASE: another process kept migrating ${store.database} for over ${Math.round(waitMs / 1000)} s (Redis lease migrate:${store.database}); start again when it is done`);
  }
  logger.warn({ database: store.database }, 'migrating without the cross-process lease (Redis unreachable): processes starting together may apply the same migrations');
  return migrate(store, migrations);
}
