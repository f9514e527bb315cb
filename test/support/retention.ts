import { setClock } from '../../core/clock';
import { RollupFeeder } from '../../clickhouse/feeder';
import type { Store } from '../../clickhouse/store';
import { retentionPurgeJob, type PurgeOutcome } from '../../workers/jobs/retention-purge';
import type { WorkerContext } from '../../workers/types';

/**
 * Checks the retention purge tests share (test/integration/retention-purge.test.ts, retention-compaction.test.ts):
 * a run after a purge has nothing left to do, and the rollup feeder is still right after one.
 */

/** Every mutation of the store's database (`table command`), sorted: a run that issues none leaves it equal. */
export async function mutationCommands(store: Store): Promise<string[]> {
  const rows = await store.query<{ c: string }>(
    'SELECT concat(table, \' \', command) AS c FROM system.mutations WHERE database = {db:String} ORDER BY c', { db: store.database });
  return rows.map((r) => r.c);
}

/** The quarter-hour rollups hold exactly the events stored: nothing fed twice, nothing missed. */
export async function rollupsMatchEvents(store: Store, siteId: string): Promise<{ events: number; views: number }> {
  const one = async (sql: string) => Number(Object.values((await store.query<Record<string, number>>(sql, { s: siteId }))[0])[0]);
  const events = await one(`SELECT count() FROM ${store.table('events')} WHERE site_id = {s:UUID}`);
  const views = await one(`SELECT countIf(name = 'pageview') FROM ${store.table('events')} WHERE site_id = {s:UUID}`);
  expect(await one(`SELECT sum(events) FROM ${store.table('session_slices')} WHERE site_id = {s:UUID}`)).toBe(events);
  expect(await one(`SELECT sum(views) FROM ${store.table('page_slices')} WHERE site_id = {s:UUID}`)).toBe(views);
  return { events, views };
}

/**
 * The scheduled job run again at `now`, right after a purge: nothing is left, so it deletes nothing,
 * compacts nothing and issues no mutation. Returns its outcome for a test's own checks.
 */
export async function expectIdleRerun(ctx: WorkerContext, store: Store, now: string): Promise<PurgeOutcome> {
  const mutations = await mutationCommands(store);
  setClock(now);
  const again = (await retentionPurgeJob.handler({}, ctx, { made: 0, max: 1 })) as PurgeOutcome;
  expect(again.mutations).toBe(0);
  expect(Object.values(again.deleted).every((n) => n === 0)).toBe(true);
  expect(Object.values(again.compacted).every((n) => n === 0)).toBe(true);
  expect(await mutationCommands(store)).toEqual(mutations);
  return again;
}

/**
 * After a purge: `importNew` stores new events (`added` of them, pageviews among them), and the rollups
 * then hold each exactly once. `restartFeeder()` plays a restarted process's feeder (its watermark read
 * from storage) and checks it fed nothing a second time.
 */
export async function expectNewEventsFedOnce(
  store: Store, siteId: string, importNew: () => Promise<unknown>, added: { events: number; views: number },
): Promise<{ restartFeeder(): Promise<void> }> {
  const start = await rollupsMatchEvents(store, siteId);
  await importNew();
  const expected = { events: start.events + added.events, views: start.views + added.views };
  expect(await rollupsMatchEvents(store, siteId)).toEqual(expected);
  return {
    async restartFeeder() {
      const restarted = new RollupFeeder(store);
      await restarted.start();
      await restarted.stop();
      expect(await rollupsMatchEvents(store, siteId)).toEqual(expected);
    },
  };
}
