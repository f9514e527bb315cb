import { migrate } from '../../clickhouse/migrate';
import type { Store } from '../../clickhouse/store';
import { ViewCounter } from '../../model/share-views';
import { openTestStore } from '../support/engine';

/**
 * The public pages' view counter over the real engine. Its writes' acknowledgements are held back
 * after the engine has committed them (a server's answer still on the wire), which is when a read
 * that overlapped a write counted that write's views twice: once stored, once as still being written.
 */
let store: Store;
beforeAll(async () => {
  store = openTestStore(`share_views_${process.pid}`);
  await migrate(store);
});
afterAll(() => store.close());

/** The real store, with each insert's answer held until `release()` after the insert has committed. */
function slowAcks(real: Store) {
  let release: () => void = () => undefined;
  let committed: () => void = () => undefined;
  const gate = { held: Promise.resolve(), committed: Promise.resolve() };
  const hold = () => {
    gate.held = new Promise<void>((resolve) => (release = resolve));
    gate.committed = new Promise<void>((resolve) => (committed = resolve));
  };
  const wrapped: Store = {
    ...real,
    insert: async (table, rows, settings) => {
      await real.insert(table, rows, settings);
      committed();
      await gate.held;
    },
  };
  return { store: wrapped, hold, release: () => release(), committed: () => gate.committed };
}

test('a read while a write is committed but not yet acknowledged counts its views once', async () => {
  const acks = slowAcks(store);
  const counter = new ViewCounter(acks.store, 3_600_000); // flushed by hand only
  try {
    for (let i = 0; i < 3; i++) counter.count('share', 'overlap');
    acks.hold();
    const writing = counter.flush();
    await acks.committed();
    const reading = counter.read('share', 'overlap');
    setTimeout(() => acks.release(), 200);
    await writing;
    expect(await reading).toBe(3);
    counter.count('share', 'overlap');
    expect(await counter.read('share', 'overlap')).toBe(4);
  } finally {
    acks.release();
    await counter.close();
  }
});

test('a write waits for the reads under way, and views counted meanwhile are kept for the next', async () => {
  const counter = new ViewCounter(store, 3_600_000);
  try {
    for (let i = 0; i < 5; i++) counter.count('widget', 'busy');
    const reads = Array.from({ length: 4 }, () => counter.read('widget', 'busy'));
    const writing = counter.flush();
    counter.count('widget', 'busy');
    expect(await Promise.all(reads)).toEqual([6, 6, 6, 6]);
    await writing;
    expect(await counter.read('widget', 'busy')).toBe(6);
    await counter.flush();
    const [row] = await store.query<{ v: number }>(
      `SELECT toUInt64(sum(views)) AS v FROM ${store.table('public_views')} WHERE kind = 'widget' AND slug = 'busy'`);
    expect(Number(row.v)).toBe(6);
  } finally {
    await counter.close();
  }
});

test('views whose write failed are kept and written by the next one', async () => {
  let fail = true;
  const flaky: Store = {
    ...store,
    insert: async (table, rows, settings) => {
      if (fail) throw new Error('engine refused the insert');
      return store.insert(table, rows, settings);
    },
  };
  const counter = new ViewCounter(flaky, 3_600_000);
  try {
    counter.count('share', 'flaky');
    counter.count('share', 'flaky');
    await counter.flush();
    expect(await counter.read('share', 'flaky')).toBe(2);
    fail = false;
    await counter.flush();
    expect(await counter.read('share', 'flaky')).toBe(2);
    const [row] = await store.query<{ v: number }>(
      `SELECT toUInt64(sum(views)) AS v FROM ${store.table('public_views')} WHERE kind = 'share' AND slug = 'flaky'`);
    expect(Number(row.v)).toBe(2);
  } finally {
    await counter.close();
  }
});
