import { AppError } from '../../../core/errors';
import { DurableBatcher } from '../../../ingest/live/batcher';

/** The durable batcher: group commit, settle after the write, bounded memory, flush on close. */
function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

test('items arriving while a write runs share the next write; callers settle only after their write', async () => {
  const writes: number[][] = [];
  const gate = deferred();
  const b = new DurableBatcher<number, string>(async (items) => {
    writes.push(items);
    if (writes.length === 1) await gate.promise;
    return items.map((i) => `ok${i}`);
  }, { maxPending: 100, maxBatch: 100 });
  const first = b.submit(1);
  await new Promise((r) => setImmediate(r));
  let settled = false;
  const rest = Promise.all([2, 3, 4].map((i) => b.submit(i))).then((r) => ((settled = true), r));
  await new Promise((r) => setTimeout(r, 20));
  expect(settled).toBe(false); // the write holding 2-4 has not run yet
  gate.release();
  expect(await first).toBe('ok1');
  expect(await rest).toEqual(['ok2', 'ok3', 'ok4']);
  expect(writes).toEqual([[1], [2, 3, 4]]);
});

test('a full buffer refuses with 503 and Retry-After instead of dropping', async () => {
  const gate = deferred();
  const b = new DurableBatcher<number, number>(async (items) => { await gate.promise; return items; }, { maxPending: 2, maxBatch: 10 });
  const inFlight = b.submit(0);
  await new Promise((r) => setImmediate(r)); // 0 is being written; the queue is empty again
  const queued = [b.submit(1), b.submit(2)];
  const refused = await b.submit(3).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(AppError);
  expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': expect.any(String) } });
  gate.release();
  expect(await Promise.all([inFlight, ...queued])).toEqual([0, 1, 2]);
});

test('a failed write fails every caller of that batch, and later writes still run', async () => {
  let fail = true;
  const b = new DurableBatcher<number, number>(async (items) => {
    if (fail) { fail = false; throw new Error('storage down'); }
    return items;
  }, { maxPending: 10, maxBatch: 10 });
  await expect(Promise.all([b.submit(1), b.submit(2)])).rejects.toThrow('storage down');
  expect(await b.submit(3)).toBe(3);
});

test('close waits for every accepted item and refuses new ones', async () => {
  const gate = deferred();
  const written: number[] = [];
  const b = new DurableBatcher<number, number>(async (items) => { await gate.promise; written.push(...items); return items; }, { maxPending: 10, maxBatch: 1 });
  const accepted = [b.submit(1), b.submit(2)];
  const closing = b.close();
  await expect(b.submit(3)).rejects.toMatchObject({ status: 503 });
  gate.release();
  await closing;
  expect(written).toEqual([1, 2]);
  await Promise.all(accepted);
});

test('pipeline: what queued while a batch prepared is prepared as soon as that batch commits, not mid-commit', async () => {
  const commitGates = [deferred(), deferred(), deferred()];
  const prepareGates = [deferred(), deferred(), deferred()];
  const log: string[] = [];
  let commits = 0;
  let prepares = 0;
  const b = new DurableBatcher<number, number>({
    prepare: async (items) => {
      log.push(`prepare ${items.join(',')}`);
      if (prepares++ > 0) await prepareGates[prepares - 1].promise;
      return items.map((i) => i * 10);
    },
    commit: async (prepared: unknown, items) => {
      log.push(`commit ${items.join(',')}`);
      await commitGates[commits++].promise;
      return prepared as number[];
    },
  }, { maxPending: 100, maxBatch: 100 });
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const first = b.submit(1);
  await tick();
  expect(log).toEqual(['prepare 1', 'commit 1']);
  // Arrivals during a commit wait for it: preparing them now would split the next batch.
  const second = [b.submit(2), b.submit(3)];
  await tick();
  expect(log).toEqual(['prepare 1', 'commit 1']);
  commitGates[0].release();
  expect(await first).toBe(10);
  await tick();
  expect(log).toEqual(['prepare 1', 'commit 1', 'prepare 2,3']);
  // 4 and 5 queue while 2,3 prepares; when 2,3 starts committing they are prepared beside it.
  const third = [b.submit(4), b.submit(5)];
  await tick();
  prepareGates[1].release();
  await tick();
  expect(log).toEqual(['prepare 1', 'commit 1', 'prepare 2,3', 'commit 2,3', 'prepare 4,5']);
  prepareGates[2].release();
  await tick();
  expect(log).toHaveLength(5); // 4,5 is prepared and waits: one commit at a time
  commitGates[1].release();
  expect(await Promise.all(second)).toEqual([20, 30]);
  await tick();
  expect(log[5]).toBe('commit 4,5');
  commitGates[2].release();
  expect(await Promise.all(third)).toEqual([40, 50]);
});

test('pipeline: a failed prepare fails only its batch and the pipeline goes on; close waits for both stages', async () => {
  let failPrepare = true;
  const committed: number[] = [];
  const b = new DurableBatcher<number, number>({
    prepare: async (items) => {
      if (failPrepare) { failPrepare = false; throw new Error('session state unavailable'); }
      return items;
    },
    commit: async (_p, items) => {
      await new Promise((r) => setTimeout(r, 10));
      committed.push(...items);
      return items;
    },
  }, { maxPending: 10, maxBatch: 10 });
  await expect(b.submit(1)).rejects.toThrow('session state unavailable');
  const accepted = [b.submit(2), b.submit(3)];
  await b.close();
  expect(committed).toEqual([2, 3]);
  expect(await Promise.all(accepted)).toEqual([2, 3]);
});
