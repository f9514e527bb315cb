import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rollupFeeder } from '../../clickhouse/feeder';
import { loadMigrations, migrate, renderAll } from '../../clickhouse/migrate';
import { renderMigration } from '../../clickhouse/render';
import { openStore, type Store } from '../../clickhouse/store';
import { openTestStore } from '../support/engine';

/**
 * The rendered DDL of both deployment shapes is pinned in __golden__/. A migration added on purpose
 * changes it: regenerate with `UPDATE_GOLDEN=1 npx jest test/unit/clickhouse-ddl` and review the diff.
 */
const GOLDEN = path.join(__dirname, '__golden__');

function pinned(file: string, statements: string[]): void {
  const text = statements.map((s) => s + ';\n').join('\n');
  const target = path.join(GOLDEN, file);
  if (process.env.UPDATE_GOLDEN) {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(target, text);
  }
  if (!existsSync(target)) throw new Error(`${file} is missing: run UPDATE_GOLDEN=1 npx jest test/unit/clickhouse-ddl`);
  expect(text).toBe(readFileSync(target, 'utf8'));
}

describe('rendered DDL', () => {
  test('single node is pinned', () => {
    pinned('ddl-single-node.sql', renderAll({ database: 'tally' }));
  });

  test('cluster (CLICKHOUSE_CLUSTER=c1) is pinned', () => {
    pinned('ddl-cluster-c1.sql', renderAll({ database: 'tally', cluster: 'c1' }));
  });

  test('single node has no cluster construct left and no unrendered marker', () => {
    const sql = renderAll({ database: 'tally' }).join('\n');
    expect(sql).not.toMatch(/ON CLUSTER|Replicated|Distributed|_local\b|\{db\}|\{on_cluster\}|\{local:/);
  });

  test('cluster mode replicates every MergeTree, ON CLUSTER everywhere, Distributed over the event tables', () => {
    const statements = renderAll({ database: 'tally', cluster: 'c1' });
    // Every DDL statement runs on the whole cluster (data statements such as a backfill INSERT cannot).
    const ddl = statements.filter((s) => /^(CREATE|ALTER|DROP|RENAME)\b/i.test(s.replace(/^--.*\n/gm, '').trim()));
    expect(ddl.length).toBeGreaterThan(10);
    for (const s of ddl) expect(s).toMatch(/ON CLUSTER c1/);
    const engines = statements.map((s) => /ENGINE\s*=\s*(\w+)/.exec(s)?.[1]).filter(Boolean);
    expect(engines.filter((e) => /MergeTree$/.test(e!) && !e!.startsWith('Replicated'))).toEqual([]);
    const distributed = statements.filter((s) => s.includes('ENGINE = Distributed')).map((s) => /tally\.(\w+) ON/.exec(s)?.[1]);
    expect(distributed).toEqual(expect.arrayContaining(['events', 'session_totals', 'payments', 'lifecycle_events', 'search_console']));
    // Shard-local tables replicate within their shard; metadata has one path for the whole cluster.
    expect(statements.join('\n')).toContain("'/clickhouse/tables/{shard}/tally/events_local', '{replica}'");
    expect(statements.join('\n')).toContain("'/clickhouse/tables/all/tally/api_keys', '{replica}', version, is_deleted");
  });

  test('a column change on a sharded table is repeated on its Distributed table, other ALTERs are not', () => {
    const sql = `ALTER TABLE {db}.{local:events} {on_cluster} ADD COLUMN IF NOT EXISTS x String;
ALTER TABLE {db}.{local:events} {on_cluster} ADD INDEX x_idx x TYPE bloom_filter GRANULARITY 1;
ALTER TABLE {db}.sites {on_cluster} ADD COLUMN IF NOT EXISTS y String;`;
    expect(renderMigration(sql, { database: 'd', cluster: 'c' })).toEqual([
      'ALTER TABLE d.events_local ON CLUSTER c ADD COLUMN IF NOT EXISTS x String',
      'ALTER TABLE d.events ON CLUSTER c ADD COLUMN IF NOT EXISTS x String',
      'ALTER TABLE d.events_local ON CLUSTER c ADD INDEX x_idx x TYPE bloom_filter GRANULARITY 1',
      'ALTER TABLE d.sites ON CLUSTER c ADD COLUMN IF NOT EXISTS y String',
    ]);
    expect(renderMigration(sql, { database: 'd' })).toEqual([
      'ALTER TABLE d.events ADD COLUMN IF NOT EXISTS x String',
      'ALTER TABLE d.events ADD INDEX x_idx x TYPE bloom_filter GRANULARITY 1',
      'ALTER TABLE d.sites ADD COLUMN IF NOT EXISTS y String',
    ]);
  });

  test('a comment above a column change (even one naming an index or a delete) does not keep it off the Distributed table', () => {
    const sql = `-- rows are deleted by tombstones; no INDEX here
ALTER TABLE {db}.{local:events} {on_cluster} ADD COLUMN IF NOT EXISTS x String;`;
    const rendered = renderMigration(sql, { database: 'd', cluster: 'c' });
    expect(rendered).toHaveLength(2);
    expect(rendered[1]).toContain('ALTER TABLE d.events ON CLUSTER c ADD COLUMN IF NOT EXISTS x String');
  });

  test('two migration files with one number are refused', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-mig-'));
    writeFileSync(path.join(dir, '0004_a.sql'), 'SELECT 1;');
    writeFileSync(path.join(dir, '0004_b.sql'), 'SELECT 2;');
    expect(() => loadMigrations(dir)).toThrow(/share number 4/);
  });
});

describe('the single-node DDL on chDB', () => {
  let store: Store;
  const database = `ddl_${process.pid}_${Date.now()}`;
  beforeAll(() => {
    store = openTestStore(database);
  });
  afterAll(() => store.close());

  test('applies every migration once and records it', async () => {
    const all = loadMigrations().map((m) => m.version);
    expect(await migrate(store)).toEqual(all);
    const recorded = await store.query<{ version: number; name: string }>(
      `SELECT version, name FROM ${store.table('schema_migrations')} FINAL ORDER BY version`,
    );
    expect(recorded.map((r) => r.version)).toEqual(all);
    expect(await migrate(store)).toEqual([]);
  });

  test('creates every table with the engine the design names', async () => {
    const rows = await store.query<{ name: string; engine: string }>(
      'SELECT name, engine FROM system.tables WHERE database = {d:String} ORDER BY name',
      { d: database },
    );
    const engines = Object.fromEntries(rows.map((r) => [r.name, r.engine]));
    expect(engines).toMatchObject({
      events: 'MergeTree', session_totals: 'AggregatingMergeTree', session_slices: 'AggregatingMergeTree',
      page_slices: 'AggregatingMergeTree', first_seen: 'AggregatingMergeTree', rollup_feed: 'ReplacingMergeTree',
      orgs: 'ReplacingMergeTree', users: 'ReplacingMergeTree', memberships: 'ReplacingMergeTree',
      sites: 'ReplacingMergeTree', api_keys: 'ReplacingMergeTree', api_key_usage: 'AggregatingMergeTree',
      goals: 'ReplacingMergeTree', funnels: 'ReplacingMergeTree', notes: 'ReplacingMergeTree',
      alerts: 'ReplacingMergeTree', share_boards: 'ReplacingMergeTree', widgets: 'ReplacingMergeTree',
      integrations: 'ReplacingMergeTree', payments: 'ReplacingMergeTree', lifecycle_events: 'ReplacingMergeTree',
      search_console: 'ReplacingMergeTree', schema_migrations: 'ReplacingMergeTree',
    });
    // Rollups are fed off the acknowledgement path (clickhouse/feeder.ts), not by views.
    expect(Object.values(engines)).not.toContain('MaterializedView');
  });

  test('events carry a column for every dimension and filter of the spec', async () => {
    const cols = new Set(
      (await store.query<{ name: string }>(
        "SELECT name FROM system.columns WHERE database = {d:String} AND table = 'events'",
        { d: database },
      )).map((r) => r.name),
    );
    // filter_<name> / breakdown dimension -> the column it reads
    const needed = {
      path: 'pathname', path_pattern: 'pathname', hostname: 'hostname', entry_path: 'entry_path', exit_link: 'link',
      file_download: 'link', goal: 'name', browser: 'browser', os: 'os', device: 'device', country: 'country',
      region: 'region', city: 'city', referrer: 'referrer_source', channel: 'channel', utm_source: 'utm_source',
      utm_medium: 'utm_medium', utm_campaign: 'utm_campaign', gad_campaign_id: 'gad_campaign_id', utm_term: 'utm_term',
      bot_kind: 'bot_kind', bots: 'is_bot', value_cents: 'value_cents', sessions: 'session_id', visitors: 'visitor_id',
    };
    expect(Object.values(needed).filter((c) => !cols.has(c))).toEqual([]);
  });

  test('the rollup feeder folds events of one session into one row, each event once', async () => {
    const site = '00000000-0000-4000-8000-000000000001';
    const ev = (ts: string, name: string, path: string) => ({
      site_id: site, ts, name, event_id: crypto.randomUUID(), visitor_id: 7, session_id: 42,
      session_start: '2026-01-01 10:00:00.000', pathname: path, entry_path: '/a', channel: 'Direct',
    });
    const feeder = rollupFeeder(store);
    const day = { siteIds: [site], minTs: Date.parse('2026-01-01T00:00:00Z'), maxTs: Date.parse('2026-01-02T00:00:00Z') };
    await feeder.write(day, () => store.insert('events', [ev('2026-01-01 10:00:00.000', 'pageview', '/a')]));
    await feeder.catchUp();
    await feeder.write(day, () => store.insert('events', [ev('2026-01-01 10:05:00.000', 'pageview', '/b'), ev('2026-01-01 10:06:00.000', 'Signup', '/b')]));
    await feeder.catchUp();
    await feeder.catchUp();
    const [s] = await store.query<Record<string, unknown>>(
      `SELECT session_id, min(first_ts) AS first, max(last_ts) AS last, sum(pageviews) AS pv, sum(events) AS ev, any(entry_path) AS entry
       FROM ${store.table('session_totals')} WHERE site_id = {s:UUID} GROUP BY session_id`,
      { s: site },
    );
    expect(s).toEqual({ session_id: 42, first: '2026-01-01 10:00:00.000', last: '2026-01-01 10:06:00.000', pv: 2, ev: 3, entry: '/a' });
  });

  test('store refuses identifiers that are not identifiers', () => {
    expect(() => store.table('events; DROP TABLE x')).toThrow(/bad table name/);
    expect(() => openStore({ database: 'a-b' })).toThrow(/CLICKHOUSE_DATABASE/);
    expect(() => openStore({ database: 'a', cluster: 'c 1', url: 'http://127.0.0.1:1' })).toThrow(/CLICKHOUSE_CLUSTER/);
  });
});
