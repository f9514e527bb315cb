import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../core/paths';
import { logger } from '../core/logger';
import { renderMigration } from './render';
import type { Store } from './store';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE_RE = /^(\d{4})_([\w-]+)\.sql$/;

/** Numbered SQL files under clickhouse/migrations, in order. */
export function loadMigrations(dir = path.join(projectRoot(), 'clickhouse', 'migrations')): Migration[] {
  return readdirSync(dir)
    .map((f) => ({ f, m: FILE_RE.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
    .map(({ f, m }) => ({ version: Number(m[1]), name: m[2], sql: readFileSync(path.join(dir, f), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Apply every migration not yet recorded in schema_migrations; each is applied once. */
export async function migrate(store: Store, migrations = loadMigrations()): Promise<number[]> {
  const target = { database: store.database, cluster: store.cluster };
  const onCluster = store.cluster ? `ON CLUSTER ${store.cluster}` : '';
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database} ${onCluster}`);
  for (const stmt of renderMigration(
    `CREATE TABLE IF NOT EXISTS {db}.schema_migrations {on_cluster} (version UInt32, name String, applied_at DateTime64(3, 'UTC'))
     ENGINE = ReplacingMergeTree ORDER BY version;`,
    target,
  )) {
    await store.command(stmt);
  }
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
