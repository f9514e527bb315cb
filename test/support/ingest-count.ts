import { openStore } from '../../clickhouse/store';

/**
 * Prints {"<pathname>": count, ...} for one site's events in an embedded data directory. Run as its
 * own process (bundled by the crash test) because chDB allows one engine per process and the test's
 * own process may already hold one.
 *   node ingest-count.js <dataDir> <database> <siteId>
 */
async function main() {
  const [dataDir, database, siteId] = process.argv.slice(2);
  const store = openStore({ dataDir, database });
  const rows = await store.query<{ p: string; c: number }>(
    `SELECT pathname AS p, count() AS c FROM ${store.table('events')} WHERE site_id = {s:UUID} GROUP BY p`, { s: siteId });
  process.stdout.write(JSON.stringify(Object.fromEntries(rows.map((r) => [r.p, Number(r.c)]))));
  await store.close();
}

main().catch((err) => {
  process.stderr.write(String(err));
  process.exit(1);
});
