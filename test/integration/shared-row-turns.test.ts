import { randomUUID } from 'node:crypto';
import { shareRowTurns } from '../../clickhouse/meta';
import { migrate } from '../../clickhouse/migrate';
import type { Store } from '../../clickhouse/store';
import { AppError } from '../../core/errors';
import { redisLeases, type Leases } from '../../infra/lease';
import { connectRedis, type RedisHandle } from '../../infra/redis';
import { IntegrationRepo, queuedBackfill, type IntegrationRow } from '../../model/integrations';
import { openTestStore } from '../support/engine';

/**
 * Row edits of several processes (server mode) on the real engine and Redis. "Another process" is a
 * second copy of the model and metadata modules (jest.isolateModules): its own per-process turns and
 * its own registry of shared turns, the same database and Redis, as an api replica beside the worker.
 */
let store: Store;
let redis: RedisHandle;
const database = `turns_${process.pid}_${Date.now()}`;

type ModelCopy = { IntegrationRepo: typeof IntegrationRepo; shareRowTurns: typeof shareRowTurns };

/** The modules as another process has them: nothing of this process's turns is shared with it. */
function anotherProcess(): ModelCopy {
  let copy: ModelCopy | undefined;
  jest.isolateModules(() => {
    copy = {
      IntegrationRepo: (require('../../model/integrations') as typeof import('../../model/integrations')).IntegrationRepo,
      shareRowTurns: (require('../../clickhouse/meta') as typeof import('../../clickhouse/meta')).shareRowTurns,
    };
  });
  return copy!;
}

beforeAll(async () => {
  store = openTestStore(database);
  await migrate(store);
  redis = connectRedis(process.env.TALLY_REDIS_URL ?? 'redis://127.0.0.1:6379', `turns-test-${process.pid}`);
  await redis.attempted;
});
afterAll(async () => {
  await redis.close();
  await store.close();
});

async function connectedSite(): Promise<string> {
  const siteId = randomUUID();
  await new IntegrationRepo(store).update(siteId, () => ({
    site_id: siteId, provider: 'stripe', account: '', credentials: 'sealed', webhook_secret: '', connected_at: '2026-11-01 00:00:00.000',
    webhook_last_at: null, ...queuedBackfill(siteId, ['payments']),
  }));
  return siteId;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * How long a held edit waits at most for the other one to finish. Without shared turns the other
 * finishes in a few statements' time; with them it cannot finish first, and this is how long it is
 * kept waiting for the turn (it asks every 25 ms). A limit, not a guess at timing: the edits go on
 * signals (the holder has read the row; the other edit has settled), not on fixed sleeps, which raced
 * the engine and Redis on a loaded machine.
 */
const HOLD_MS = 2000;

/**
 * The race of the notes: the worker writes an import's progress (it read the row, then stored a
 * page) while an api process re-syncs (a new generation). Each edit reads the row and writes it whole.
 * The re-sync starts once the progress has read the row, and the progress writes once the re-sync
 * has settled (or after HOLD_MS, when the re-sync is waiting for the row's turn).
 */
async function raceProgressAgainstResync(worker: IntegrationRepo, api: IntegrationRepo, siteId: string): Promise<IntegrationRow> {
  const progressRead = deferred();
  const resyncSettled = deferred();
  const progress = worker.update(siteId, async (row) => {
    progressRead.resolve();
    await Promise.race([resyncSettled.promise, pause(HOLD_MS)]); // storing the page
    return row && { ...row, backfill_cursor: 'page-7' };
  });
  await progressRead.promise;
  const resync = api.update(siteId, (row) => row && { ...row, backfill_job: 'generation-2' });
  void resync.then(resyncSettled.resolve, resyncSettled.resolve);
  await Promise.all([progress, resync]);
  return (await new IntegrationRepo(store).get(siteId))!;
}

test('without shared turns two processes lose one of two edits of a row (the race shared turns close)', async () => {
  const other = anotherProcess();
  const siteId = await connectedSite();
  const row = await raceProgressAgainstResync(new IntegrationRepo(store), new other.IntegrationRepo(store), siteId);
  // The re-sync wrote first and the progress, built on the row read before it, wrote over it.
  expect(row.backfill_cursor).toBe('page-7');
  expect(row.backfill_job).not.toBe('generation-2');
});

describe('with shared turns (server mode)', () => {
  let leases: Leases;
  let other: ModelCopy;
  beforeAll(() => {
    leases = redisLeases(redis, 'row-turn', 10_000);
    other = anotherProcess();
    shareRowTurns(store, leases);
    other.shareRowTurns(store, leases);
  });

  test('an edit in another process waits for the row\'s turn, so both edits land', async () => {
    const siteId = await connectedSite();
    const row = await raceProgressAgainstResync(new IntegrationRepo(store), new other.IntegrationRepo(store), siteId);
    expect(row.backfill_cursor).toBe('page-7');
    expect(row.backfill_job).toBe('generation-2');
  });

  test('a copy of the store (what dedicated() gives in server mode) shares the turns', async () => {
    const siteId = await connectedSite();
    const copy = { ...store, close: () => Promise.resolve() };
    const row = await raceProgressAgainstResync(new IntegrationRepo(store), new other.IntegrationRepo(copy), siteId);
    expect(row.backfill_cursor).toBe('page-7');
    expect(row.backfill_job).toBe('generation-2');
  });

  test('edits of different rows do not wait for each other', async () => {
    const [a, b] = [await connectedSite(), await connectedSite()];
    const order: string[] = [];
    const aHeld = deferred();
    const bDone = deferred();
    // a holds its row's turn until b's edit is done (or HOLD_MS, were b kept waiting for a).
    const slow = new IntegrationRepo(store).update(a, async (row) => {
      aHeld.resolve();
      await Promise.race([bDone.promise, pause(HOLD_MS)]);
      order.push('a');
      return row;
    });
    await aHeld.promise;
    await new other.IntegrationRepo(store).update(b, async (row) => {
      order.push('b');
      return row;
    });
    bDone.resolve();
    await slow;
    expect(order).toEqual(['b', 'a']);
  });

  test('an edit kept waiting past the wait is a 503 overloaded with Retry-After, and writes nothing', async () => {
    const siteId = await connectedSite();
    const impatient = anotherProcess();
    impatient.shareRowTurns(store, leases, 100);
    const held = deferred();
    const answered = deferred();
    // The turn is held from before the impatient edit asks until it has been answered.
    const holding = new IntegrationRepo(store).update(siteId, async (row) => {
      held.resolve();
      await Promise.race([answered.promise, pause(10_000)]);
      return row && { ...row, backfill_cursor: 'held' };
    });
    await held.promise;
    const refused = new impatient.IntegrationRepo(store).update(siteId, (row) => row && { ...row, backfill_cursor: 'late' });
    void refused.then(answered.resolve, answered.resolve);
    await expect(refused).rejects.toMatchObject({ status: 503, code: 'overloaded', headers: { 'Retry-After': '5' } });
    await holding;
    expect((await new IntegrationRepo(store).get(siteId))!.backfill_cursor).toBe('held');
  });
});

test('while Redis is down a shared store\'s edits go ahead on per-process turns', async () => {
  const down = connectRedis('redis://127.0.0.1:1', `turns-down-${process.pid}`);
  await down.attempted;
  const copy = anotherProcess();
  copy.shareRowTurns(store, redisLeases(down, 'row-turn', 10_000));
  try {
    expect(down.isUp()).toBe(false);
    const siteId = await connectedSite();
    const row = await new copy.IntegrationRepo(store).update(siteId, (r) => r && { ...r, backfill_cursor: 'no-redis' });
    expect(row?.backfill_cursor).toBe('no-redis');
    expect((await new IntegrationRepo(store).get(siteId))!.backfill_cursor).toBe('no-redis');
  } finally {
    await down.close();
  }
});

test('a lease is busy while held, taken once released, and released when its work fails', async () => {
  const leases = redisLeases(redis, 'row-turn-unit', 10_000);
  await expect(leases.run('k', async () => {
    throw new AppError(400, 'invalid_request', 'bad edit');
  })).rejects.toThrow('bad edit');
  expect(await leases.run('k', async () => 'again')).toEqual({ held: true, value: 'again' });
  const entered = deferred();
  const leave = deferred();
  const inside = leases.run('k', async () => {
    entered.resolve();
    await leave.promise;
    return 1;
  });
  await entered.promise; // held from here until `leave`
  expect(await leases.run('k', async () => 2)).toEqual({ held: false, why: 'busy' });
  const waiting = leases.run('k', async () => 3, 1000);
  await pause(50); // the waiting taker finds it busy, then takes it once released
  leave.resolve();
  expect(await waiting).toEqual({ held: true, value: 3 });
  expect(await inside).toEqual({ held: true, value: 1 });
});
