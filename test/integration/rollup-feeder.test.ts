import { randomUUID } from 'node:crypto';
import { redisFeedLock } from '../../clickhouse/feed-lock';
import { RollupFeeder } from '../../clickhouse/feeder';
import { migrate } from '../../clickhouse/migrate';
import type { Store } from '../../clickhouse/store';
import { connectRedis, type RedisHandle } from '../../infra/redis';
import { openTestStore } from '../support/engine';

/**
 * The rollup feeder on the real engine. Each `new RollupFeeder(store)` plays one process's feeder
 * (state read from storage when it starts), so a restart is a new instance; rows inserted with
 * store.insert directly are rows a previous process stored and never fed. Every stored event reaches
 * every rollup exactly once —
 * across feeds, after a feed cut short mid-way (the restart repeats it with the same deduplication
 * tokens), for blocks stored but never fed before a restart, and for writes that run while a feed
 * does.
 */
let store: Store;
const database = `feeder_${process.pid}_${Date.now()}`;

let redis: RedisHandle;

beforeAll(async () => {
  store = openTestStore(database);
  await migrate(store);
  redis = connectRedis(process.env.TALLY_REDIS_URL ?? 'redis://127.0.0.1:6379', `feeder-test-${process.pid}`);
  await redis.attempted;
});
afterAll(async () => {
  await redis.close();
  await store.close();
});

const event = (site: string, session: number, ts: string, name = 'pageview', pathname = '/a') => ({
  site_id: site, ts, name, event_id: randomUUID(), visitor_id: session * 10, session_id: session,
  session_start: ts, pathname, hostname: 'x.example', entry_path: '/a', channel: 'Direct', is_bot: 0,
});

interface Totals {
  slices_events: number;
  slices_pageviews: number;
  pages_views: number;
  totals_events: number;
  first_seen: number;
}

async function totals(site: string): Promise<Totals> {
  const one = async (sql: string) => Number(Object.values((await store.query<Record<string, number>>(sql, { s: site }))[0] ?? { v: 0 })[0] ?? 0);
  const t = (name: string) => store.table(name);
  return {
    slices_events: await one(`SELECT sum(events) FROM ${t('session_slices')} WHERE site_id = {s:UUID}`),
    slices_pageviews: await one(`SELECT sum(pageviews) FROM ${t('session_slices')} WHERE site_id = {s:UUID}`),
    pages_views: await one(`SELECT sum(views) FROM ${t('page_slices')} WHERE site_id = {s:UUID}`),
    totals_events: await one(`SELECT sum(events) FROM ${t('session_totals')} WHERE site_id = {s:UUID}`),
    first_seen: await one(`SELECT count() FROM ${t('first_seen')} FINAL WHERE site_id = {s:UUID}`),
  };
}

/** Ten events: three sessions, nine pageviews and one Signup. */
function tenEvents(site: string) {
  return [
    ...[0, 1, 2, 3].map((i) => event(site, 1, `2026-03-01 10:0${i}:00.000`)),
    ...[0, 1, 2].map((i) => event(site, 2, `2026-03-01 11:0${i}:00.000`, 'pageview', '/b')),
    event(site, 3, '2026-03-02 09:00:00.000'),
    event(site, 3, '2026-03-02 09:01:00.000'),
    event(site, 3, '2026-03-02 09:02:00.000', 'Signup'),
  ];
}

const EXPECTED: Totals = { slices_events: 10, slices_pageviews: 9, pages_views: 9, totals_events: 10, first_seen: 3 };

const hint = (site: string) => ({ siteIds: [site], minTs: Date.parse('2026-03-01T00:00:00Z'), maxTs: Date.parse('2026-03-03T00:00:00Z') });

/** A feeder whose feeds fail after each rollup insert (a crash mid-feed) until `heal()`. */
function failingFeeder(): { feeder: RollupFeeder; heal: () => void } {
  let failing = true;
  const feeder = new RollupFeeder(store, {
    afterRollup: () => {
      if (failing) throw new Error('simulated crash after a rollup insert');
    },
  });
  return {
    feeder,
    heal: () => {
      failing = false;
    },
  };
}

/** A fresh process's feeder (state read from storage), started and stopped: its start and last feeds run. */
async function restart(opts: { chunkRows?: number } = {}): Promise<void> {
  const restarted = new RollupFeeder(store, opts);
  await restarted.start();
  await restarted.stop();
}

test('writes through the feeder reach every rollup once, however many catch-ups follow', async () => {
  const site = randomUUID();
  const feeder = new RollupFeeder(store);
  const rows = tenEvents(site);
  await feeder.write(hint(site), () => store.insert('events', rows.slice(0, 4)));
  await feeder.catchUp();
  await feeder.write(hint(site), () => store.insert('events', rows.slice(4)));
  await Promise.all([feeder.catchUp(), feeder.catchUp()]);
  await feeder.catchUp();
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a feed cut short after its first rollup is finished by the next start, not repeated', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  await store.insert('events', tenEvents(site));
  const crashing = failingFeeder();
  await crashing.feeder.catchUp(); // logs the failure; session_slices has the rows, the others not yet
  const partial = await totals(site);
  expect(partial.slices_events).toBe(10);
  expect(partial.totals_events).toBe(0);
  crashing.heal();
  // A fresh process: its state comes from storage, which records the range being fed.
  await restart();
  expect(await totals(site)).toEqual(EXPECTED);
  await new RollupFeeder(store).catchUp();
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a report waiting on a feed that failed is refused 503 until a feed succeeds', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  const { feeder, heal } = failingFeeder();
  await feeder.write(hint(site), () => store.insert('events', tenEvents(site)));
  await expect(feeder.upToDate()).rejects.toMatchObject({ status: 503, code: 'storage_unavailable', headers: { 'Retry-After': '2' } });
  heal();
  await feeder.write(hint(site), () => store.insert('events', []));
  await feeder.upToDate();
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a feed cut short, then more events stored, then a restart: every event counts once', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  const rows = tenEvents(site);
  await store.insert('events', rows.slice(0, 7));
  const crashing = failingFeeder();
  await crashing.feeder.catchUp();
  expect((await totals(site)).slices_events).toBe(7);
  crashing.heal();
  await store.insert('events', rows.slice(7)); // new blocks beyond the interrupted range
  await restart();
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a feed cut into chunks and crashed mid-way is finished by the next start with the same chunks', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  const rows = tenEvents(site);
  // Four blocks of 4, 3, 2 and 1 events; chunks of at most 3 events: [4] [3] [2, 1].
  for (const part of [rows.slice(0, 4), rows.slice(4, 7), rows.slice(7, 9), rows.slice(9)]) await store.insert('events', part);
  let inserts = 0;
  const crashing = new RollupFeeder(store, {
    chunkRows: 3,
    afterRollup: () => {
      if (++inserts === 6) throw new Error('simulated crash in the second chunk');
    },
  });
  await crashing.catchUp();
  expect((await totals(site)).slices_events).toBe(7); // both finished chunks' session slices
  await restart({ chunkRows: 3 });
  expect(await totals(site)).toEqual(EXPECTED);
});

test('blocks stored but never fed before a restart are fed when the feeder starts', async () => {
  const site = randomUUID();
  await store.insert('events', tenEvents(site));
  expect((await totals(site)).slices_events).toBe(0);
  await restart();
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a report-time catch-up includes a write that finished while a feed was running', async () => {
  const site = randomUUID();
  const feeder = new RollupFeeder(store);
  const rows = tenEvents(site);
  await feeder.write(hint(site), () => store.insert('events', rows.slice(0, 5)));
  const first = feeder.catchUp();
  await feeder.write(hint(site), () => store.insert('events', rows.slice(5)));
  await feeder.catchUp();
  await first;
  expect(await totals(site)).toEqual(EXPECTED);
});

/** A feeder as another process of a server-mode deployment runs it: sharing the lease. */
function sharedFeeder(lock: ReturnType<typeof redisFeedLock>): RollupFeeder {
  const feeder = new RollupFeeder(store, { shared: true });
  feeder.useLock(lock);
  return feeder;
}

test('feeders of several processes (a ClickHouse server) take turns by lease and count each event once', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  const lock = redisFeedLock(redis, database);
  // Two "processes": each reads the watermark afresh and feeds whole block ranges under the lease.
  const [a, b] = [sharedFeeder(lock), sharedFeeder(lock)];
  const rows = tenEvents(site);
  await store.insert('events', rows.slice(0, 5));
  // While a holds the lease, b's feed waits for it, not run beside it.
  let waiting: Promise<void> | null = null;
  await lock.withLease(async () => {
    waiting = b.catchUp();
    await new Promise((r) => setTimeout(r, 300));
    expect((await totals(site)).slices_events).toBe(0);
  });
  await waiting;
  expect((await totals(site)).slices_events).toBe(5);
  // Taking turns: each must start from the watermark the other left, not from its own last feed.
  await a.catchUp();
  await store.insert('events', rows.slice(5, 8));
  await b.catchUp();
  await store.insert('events', rows.slice(8));
  await a.catchUp();
  expect(await totals(site)).toEqual(EXPECTED);
  // At the same time: one feeds, the others skip or find nothing new.
  await Promise.all([a.catchUp(), b.catchUp(), a.catchUp(), b.catchUp()]);
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a shared report-time catch-up waits out another process\'s lease and counts events acknowledged before it', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  const lock = redisFeedLock(redis, database);
  const reporting = sharedFeeder(lock);
  // Another process is feeding (it holds the lease) when this process stores events and a report starts.
  let catchUp: Promise<void> | null = null;
  await lock.withLease(async () => {
    await reporting.write(hint(site), () => store.insert('events', tenEvents(site)));
    catchUp = reporting.catchUp();
    await new Promise((r) => setTimeout(r, 200));
  });
  await catchUp;
  expect(await totals(site)).toEqual(EXPECTED);
});

test('a shared feeder without a lease to take does not feed', async () => {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  await store.insert('events', tenEvents(site));
  const lone = new RollupFeeder(store, { shared: true });
  await lone.catchUp();
  expect((await totals(site)).slices_events).toBe(0);
  await new RollupFeeder(store).catchUp();
  expect(await totals(site)).toEqual(EXPECTED);
});

test('cluster mode is refused at start instead of feeding from a table without parts', async () => {
  const clustered = openTestStore(database, { cluster: 'c1' });
  try {
    expect(() => new RollupFeeder(clustered).start()).toThrow(/CLICKHOUSE_CLUSTER.*cluster mode/);
  } finally {
    await clustered.close();
  }
});

/**
 * Ten events an earlier process stored unfed, and a start-up feeder for them whose feed holds after its
 * first rollup insert until `release()`.
 */
async function backlogHeldAtStart(opts: { bootWaitMs?: number; through?: Store } = {}) {
  const site = randomUUID();
  await new RollupFeeder(store).catchUp();
  await store.insert('events', tenEvents(site));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const holding = new Promise<void>((r) => (reached = r));
  let first = true;
  const feeder = new RollupFeeder(opts.through ?? store, {
    bootWaitMs: opts.bootWaitMs,
    afterRollup: async () => {
      if (!first) return;
      first = false;
      reached();
      await held;
    },
  });
  return { site, feeder, holding, release };
}

describe('the start-up catch-up runs while the service answers', () => {
  test('a live write arriving before the start-up feed does not narrow it: an earlier process\'s unfed blocks are fed too', async () => {
    const [earlier, live] = [randomUUID(), randomUUID()];
    await new RollupFeeder(store).catchUp();
    await store.insert('events', tenEvents(earlier)); // stored by a process that died before feeding it
    const feeder = new RollupFeeder(store);
    // A request already in the batcher when the catch-up reads its range (the listeners are open).
    let finish!: () => void;
    const writing = feeder.write(hint(live), () => new Promise<void>((r) => (finish = r)).then(() => store.insert('events', tenEvents(live))));
    const started = feeder.start();
    finish();
    await writing;
    await started;
    await feeder.catchUp();
    expect(await totals(earlier)).toEqual(EXPECTED);
    expect(await totals(live)).toEqual(EXPECTED);
    await feeder.stop();
  });

  test('a report waits for the start-up catch-up, then is refused 503 while it goes on; answered once it is done', async () => {
    const { site, feeder, holding, release } = await backlogHeldAtStart({ bootWaitMs: 200 });
    const started = feeder.start();
    await holding;
    expect(feeder.health).toBe('catching_up');
    await expect(feeder.upToDate()).rejects.toMatchObject({
      status: 503, code: 'storage_unavailable', message: expect.stringContaining('catching up'), headers: { 'Retry-After': '5' },
    });
    // A report asked just before the catch-up ends waits for it rather than being refused.
    const waiting = feeder.upToDate();
    release();
    await waiting;
    await started;
    expect(feeder.health).toBe('current');
    expect(await totals(site)).toEqual(EXPECTED);
    await feeder.stop();
  });

  test('shutdown during the start-up catch-up stops it at the next rollup insert; the next start finishes it, each event once', async () => {
    const { site, feeder, holding, release } = await backlogHeldAtStart();
    void feeder.start();
    await holding;
    const stopped = feeder.stop();
    release();
    await stopped;
    const partial = await totals(site);
    expect(partial.slices_events).toBe(10); // the first rollup's insert ran; the others did not
    expect(partial.totals_events).toBe(0);
    await restart();
    expect(await totals(site)).toEqual(EXPECTED);
  });

  test('a feed queued during the start-up catch-up issues nothing once shutdown began: stop() resolves with no statement left to run', async () => {
    let stopped = false;
    const late: string[] = [];
    const note = (what: string) => void (stopped && late.push(what));
    // The store as the feeder sees it, noting any statement issued after stop() resolved (storage closes next).
    const through: Store = {
      ...store,
      query: (sql, params, settings) => (note(sql), store.query(sql, params, settings)),
      command: (sql, params, settings) => (note(sql), store.command(sql, params, settings)),
      insert: (table, rows, settings) => (note(table), store.insert(table, rows, settings)),
    } as Store;
    const { feeder, holding, release } = await backlogHeldAtStart({ through });
    void feeder.start();
    await holding;
    // Ingest meanwhile (the listeners are open), and the 1 s timer asks for a feed behind the catch-up.
    const live = randomUUID();
    await feeder.write(hint(live), () => store.insert('events', tenEvents(live)));
    void feeder.catchUp();
    const stopping = feeder.stop();
    release();
    await stopping;
    stopped = true;
    await new Promise((r) => setTimeout(r, 500));
    expect(late).toEqual([]);
    await restart();
    expect(await totals(live)).toEqual(EXPECTED);
  });
});
