import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../clickhouse/migrate';
import { openStore, type Store } from '../../clickhouse/store';
import { EVENT_COLUMNS } from '../../ingest/event';

/**
 * What one insert into `events` costs because of the materialized views fed from it: the same
 * positional rows inserted into `events` (every MV of the migrations attached) and into a copy of the
 * table without views, alternately, 25 rounds per batch size; medians.
 *   node scripts/bench.mjs bench/ingest/mv-cost.ts
 */
function row(i: number): unknown[] {
  const values: Record<string, unknown> = {
    site_id: '6f1c1f4e-0000-4000-8000-000000000001', ts: '2026-01-01 00:00:00.000', name: 'pageview', event_id: crypto.randomUUID(),
    visitor_id: String(1234567890123 + i), session_id: String(i % 50), session_start: '2026-01-01 00:00:00.000', is_bot: 0,
    value_cents: 0, props: {}, pathname: `/docs/page-${i % 300}`, hostname: 'bench.example', browser: 'Chrome', country: 'US', channel: 'Direct',
  };
  return EVENT_COLUMNS.map((c) => values[c] ?? '');
}

async function time(store: Store, table: string, rows: unknown[][]): Promise<number> {
  const t = performance.now();
  await store.client.insert({ table: store.table(table), values: rows, format: 'JSONCompactEachRow', columns: [...EVENT_COLUMNS] });
  return performance.now() - t;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-mv-'));
  const store = openStore({ database: 'bench', dataDir: dir });
  try {
    await migrate(store);
    await store.command(`CREATE TABLE ${store.table('events_plain')} AS ${store.table('events')}`);
    const views = await store.query<{ name: string }>(`SELECT name FROM system.tables WHERE database = 'bench' AND engine = 'MaterializedView'`);
    console.log(JSON.stringify({ views_on_events: views.map((v) => v.name) }));
    for (const size of [10, 200, 1000]) {
      const rows = Array.from({ length: size }, (_, i) => row(i));
      const t: Record<string, number[]> = { events: [], events_plain: [] };
      for (let r = 0; r < 25; r++) for (const table of ['events', 'events_plain']) t[table].push(await time(store, table, rows));
      const median = (v: number[]) => Number(v.sort((a, b) => a - b)[12].toFixed(1));
      console.log(JSON.stringify({ rows: size, with_views_ms: median(t.events), without_views_ms: median(t.events_plain) }));
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
