import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../clickhouse/migrate';
import { openStore } from '../../clickhouse/store';
import { Repos } from '../../model/repos';
import { seedEvents } from '../../ingest/seed/seed';

/**
 * How long `tally seed` takes for N events (default 10 million) on embedded chDB.
 *   node scripts/bench.mjs bench/ingest/seed-bench.ts [events]
 */
async function main() {
  const events = Number(process.argv[2] ?? 10_000_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-seed-bench-'));
  const store = openStore({ database: 'bench', dataDir: dir });
  try {
    await migrate(store);
    const repos = new Repos(store);
    const org = await repos.createOrg('bench');
    const site = await repos.createSite({ org_id: org.id, domain: 'bench.example' });
    const t0 = performance.now();
    const out = await seedEvents(store, site, { events, days: 90, seed: 1 });
    const s = (performance.now() - t0) / 1000;
    console.log(JSON.stringify({ events: out.inserted, seconds: Number(s.toFixed(1)), events_per_second: Math.round(out.inserted / s) }));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
