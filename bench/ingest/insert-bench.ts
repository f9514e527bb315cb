import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../clickhouse/migrate';
import { openStore, type Store } from '../../clickhouse/store';
import { geoLookup } from '../../ingest/enrich/geo';
import { enrichEvent, EVENT_COLUMNS } from '../../ingest/event';
import { identify } from '../../ingest/live/identity';
import { sessionize } from '../../ingest/live/sessionize';
import { SaltStore } from '../../ingest/live/salts';
import { parsePayload } from '../../ingest/live/payload';
import type { RedisHandle } from '../../infra/redis';
import { benchRequests } from './payloads';

/**
 * The engine's raw insert rate for the rows collect-bench produces: the same payloads enriched and
 * sessionised by the real code, inserted straight into `events` (embedded chDB) as live ingest does
 * (positional JSONCompactEachRow) in batches of several sizes, one insert at a time. This is the
 * ceiling the HTTP path works under.
 *   node scripts/bench.mjs bench/ingest/insert-bench.ts [total rows per size]
 */
const total = Number(process.argv[2] ?? 20_000);
const offline = { isUp: () => false, prefix: 'bench' } as unknown as RedisHandle;

async function buildRows(count: number): Promise<unknown[][]> {
  const site = { id: '6f1c1f4e-0000-4000-8000-000000000001', domain: 'bench.example' };
  const salts = new SaltStore(offline);
  const geo = geoLookup();
  const items = [];
  for (const r of benchRequests(site.domain, count)) {
    const p = parsePayload(JSON.parse(r.body));
    if (typeof p === 'string') throw new Error(p);
    const event = enrichEvent({ ts: new Date(), name: p.name, url: p.url, referrer: p.referrer, userAgent: r.headers['user-agent'],
      ip: r.headers['x-forwarded-for'], props: p.props, valueCents: p.valueCents }, site, geo);
    const identity = await identify(salts, { strategy: 'salted_hash', siteId: site.id, ip: r.headers['x-forwarded-for'],
      userAgent: r.headers['user-agent'], fromBrowser: false, nowMs: Date.now() });
    items.push({ event, identity, tsMs: Date.now() });
  }
  return sessionize(items, new Map()).rows;
}

async function timeBatches(store: Store, rows: unknown[][], size: number) {
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < rows.length; i += size) {
    const s = performance.now();
    await store.client.insert({ table: store.table('events'), values: rows.slice(i, i + size), format: 'JSONCompactEachRow', columns: [...EVENT_COLUMNS] });
    latencies.push(performance.now() - s);
  }
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1));
  return { batch: size, rows_per_second: Math.round(rows.length / seconds), insert_ms_p50: q(0.5), insert_ms_p99: q(0.99) };
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-insert-bench-'));
  const store = openStore({ database: 'bench', dataDir: dir });
  try {
    await migrate(store);
    const rows = await buildRows(total);
    for (const size of [1, 32, 256, 1000, 5000]) {
      const n = size === 1 ? Math.min(total, 500) : total;
      console.log(JSON.stringify(await timeBatches(store, rows.slice(0, n), size)));
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
