import { setClock } from '../../core/clock';
import { COMPACT_SHARE, compactionFor, maskedPartitions } from '../../clickhouse/retention';
import type { Store } from '../../clickhouse/store';
import type { PurgeOutcome } from '../../workers/jobs/retention-purge';
import type { WorkerContext } from '../../workers/types';
import { reportSuite, type ReportSuite } from './reports-support';
import type { Tenant } from '../support/harness';
import { expectIdleRerun, expectNewEventsFedOnce, mutationCommands as storeMutations } from '../support/retention';

/**
 * The purge frees the disk its lightweight deletes only masked (clickhouse/retention.ts "Freeing the
 * disk"), on the real engine. Seeded events (now 2026-05-20T12:00Z):
 * - org D keeps 30 days (cutoff 2026-04-19): events around 18-28 Feb, 11-31 Mar, 16 Apr-20 May;
 * - org E keeps 60 days (cutoff 2026-03-20): events around 26-31 Mar, which it keeps.
 * So after the deletes: February has nothing visible and lies before both cutoffs (dropped); March is
 * mostly masked with E's rows visible (mask applied); April is masked for 16-18 April only, well under a
 * third (left alone); May has nothing masked.
 */
jest.setTimeout(300_000);

const NOW = '2026-05-20T12:00:00Z';
const MONTHLY = ['events', 'session_slices', 'page_slices', 'session_totals'];

let s: ReportSuite;
let store: Store;
let e: Tenant;
let run: PurgeOutcome;
let before: { parts: Map<string, PartStat>; reports: unknown[]; mutations: string[] };

interface PartStat { parts: number; rows: number; bytes: number; lwd: number }

/** Active parts per `table/partition`. */
async function partStats(): Promise<Map<string, PartStat>> {
  const rows = await store.query<{ k: string } & PartStat>(
    `SELECT concat(table, '/', partition_id) AS k, count() AS parts, sum(rows) AS rows, sum(bytes_on_disk) AS bytes,
       max(has_lightweight_delete) AS lwd
     FROM system.parts WHERE database = {db:String} AND active GROUP BY k`, { db: store.database });
  return new Map(rows.map((r) => [r.k, { parts: Number(r.parts), rows: Number(r.rows), bytes: Number(r.bytes), lwd: Number(r.lwd) }]));
}

const mutationCommands = () => storeMutations(store);

async function seed(siteId: string, now: string, events: number, days: number) {
  setClock(now);
  await s.svc.admin('seed', { site: siteId, events: String(events), days: String(days), seed: '7' });
}

/** Reports inside both organisations' retention windows. */
async function reports(): Promise<unknown[]> {
  setClock(NOW);
  const out: unknown[] = [];
  for (const [t, qs] of [
    [s.t, 'period=last30d'], [s.t, 'period=all'], [s.t, 'from=2026-04-20T12:00:00Z&to=2026-05-01T00:00:00Z'],
    [e, 'period=all'], [e, 'from=2026-03-21T12:00:00Z&to=2026-04-01T00:00:00Z'],
  ] as [Tenant, string][]) {
    for (const path of ['/overview', '/timeseries', '/breakdowns/path', '/engagement']) {
      const res = await s.svc.api('GET', `/sites/${t.siteId}${path}?${qs}`, { token: t.token });
      expect([path, qs, res.status]).toEqual([path, qs, 200]);
      out.push([t.siteId, path, qs, res.body]);
    }
  }
  return out;
}

const workerCtx = () => ({ ...s.svc.running.ctx }) as unknown as WorkerContext;

beforeAll(async () => {
  s = await reportSuite({ now: NOW, retentionDays: 30 });
  store = s.svc.running.ctx.store;
  e = await s.svc.tenant();
  const repos = s.svc.running.ctx.repos;
  await repos.orgs.put({ ...(await repos.getOrg(e.orgId))!, retention_days: 60 });
  await seed(s.t.siteId, '2026-02-28T12:00:00Z', 20_000, 9);
  await seed(s.t.siteId, '2026-03-31T12:00:00Z', 40_000, 19);
  await seed(s.t.siteId, NOW, 40_000, 33);
  await seed(e.siteId, '2026-03-31T12:00:00Z', 2_000, 4);
  before = { parts: await partStats(), reports: await reports(), mutations: await mutationCommands() };
  setClock(NOW);
  run = await s.svc.admin<PurgeOutcome>('retention purge', {});
});
afterAll(() => s.stop());

test('the fixture: February, March, April and May partitions in every monthly table', () => {
  for (const table of MONTHLY) {
    for (const m of ['202602', '202603', '202604', '202605']) expect([table, m, (before.parts.get(`${table}/${m}`)?.rows ?? 0) > 0]).toEqual([table, m, true]);
  }
});

test('a month left with no visible row, before every cutoff, is dropped: its parts are gone', async () => {
  const after = await partStats();
  for (const table of MONTHLY) {
    expect([table, before.parts.get(`${table}/202602`)!.bytes > 0, after.get(`${table}/202602`)]).toEqual([table, true, undefined]);
  }
  const commands = await mutationCommands();
  // A drop is no mutation of the parts: nothing was rewritten.
  expect(commands.filter((c) => c.includes('202602'))).toEqual([]);
});

test('a month mostly deleted gets its mask applied: its bytes drop, its visible rows stay', async () => {
  const after = await partStats();
  const visible = Number((await store.query<{ n: number }>(
    `SELECT count() AS n FROM ${store.table('events')} WHERE toYYYYMM(ts) = 202603`))[0].n);
  expect(visible).toBeGreaterThan(0);
  const was = before.parts.get('events/202603')!;
  const now = after.get('events/202603')!;
  // Stored rows are the visible rows again, and the bytes went with the masked rows.
  expect(now).toMatchObject({ rows: visible, lwd: 0 });
  expect(now.bytes).toBeLessThan(was.bytes / 4);
  for (const table of MONTHLY) {
    expect([table, after.get(`${table}/202603`)!.lwd, after.get(`${table}/202603`)!.bytes < before.parts.get(`${table}/202603`)!.bytes])
      .toEqual([table, 0, true]);
  }
  expect(await mutationCommands()).toEqual(expect.arrayContaining([`events (APPLY DELETED MASK IN PARTITION ID '202603')`]));
  // The whole table's active parts shrank too (what an operator sees).
  const total = (m: Map<string, PartStat>) => [...m].filter(([k]) => k.startsWith('events/')).reduce((n, [, p]) => n + p.bytes, 0);
  expect(total(after)).toBeLessThan(total(before.parts) * 0.75);
});

test('a month with under a third masked is left alone: no mutation rewrites it', async () => {
  const after = await partStats();
  const april = after.get('events/202604')!;
  expect(april.lwd).toBe(1);
  expect(april.rows).toBe(before.parts.get('events/202604')!.rows);
  const visible = Number((await store.query<{ n: number }>(`SELECT count() AS n FROM ${store.table('events')} WHERE toYYYYMM(ts) = 202604`))[0].n);
  expect(visible).toBeLessThan(april.rows);
  expect((april.rows - visible) / april.rows).toBeLessThan(COMPACT_SHARE);
  expect((await mutationCommands()).filter((c) => c.includes('202604'))).toEqual([]);
});

test('after the run no partition of a purged table is left that the rule would compact', async () => {
  const left = await maskedPartitions(store);
  expect(left.filter((p) => compactionFor(p, Date.parse('2026-03-20T00:00:00Z')) !== null)).toEqual([]);
  // April's masked rows are still there, so the measure finds them.
  expect(left.map((p) => `${p.table}/${p.partition}`)).toContain('events/202604');
});

test('the run counts what it freed and the mutations it issued', async () => {
  const after = await partStats();
  const freed = before.parts.get('events/202602')!.rows + before.parts.get('events/202603')!.rows - after.get('events/202603')!.rows;
  expect(run.compacted.events).toBe(freed);
  for (const table of MONTHLY) expect([table, run.compacted[table] > 0]).toEqual([table, true]);
  const compactions = (await mutationCommands()).filter((c) => c.includes('APPLY DELETED MASK')).length;
  // Drops are not in system.mutations; each monthly table had one (February).
  const newMutations = (await mutationCommands()).length - before.mutations.length;
  expect(compactions).toBeGreaterThanOrEqual(MONTHLY.length);
  expect(run.mutations).toBe(newMutations + MONTHLY.length);
});

test('reports inside the retention windows answer as before', async () => {
  expect(await reports()).toEqual(before.reports);
});

test('a second run compacts nothing more and issues no mutation', async () => {
  await expectIdleRerun(workerCtx(), store, NOW);
});

test('after compaction and drops, new events are fed exactly once, also by a restarted feeder', async () => {
  setClock(NOW);
  const fed = await expectNewEventsFedOnce(store, s.t.siteId, () => s.importLines([
    { ts: '2026-05-20T10:00:00Z', visitor: 'n1', path: '/' },
    { ts: '2026-05-20T10:01:00Z', visitor: 'n1', path: '/pricing' },
    // Into the dropped month and the compacted one: old, but fed like any other write.
    { ts: '2026-02-20T10:00:00Z', visitor: 'n2', path: '/old' },
    { ts: '2026-03-15T10:00:00Z', visitor: 'n3', name: 'Signup', path: '/old' },
  ]), { events: 4, views: 3 });
  await fed.restartFeeder();
});
