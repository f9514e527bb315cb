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

test('pipeline: events arriving during an insert are prepared at once and all go into the next insert', async () => {
  const commitGates = [deferred(), deferred()];
  const log: string[] = [];
  let commits = 0;
  const b = new DurableBatcher<number, number, number[]>({
    prepare: async (items) => {
      log.push(`prepare ${items.join(',')}`);
      return items.map((i) => i * 10);
    },
    commit: async (prepared, items) => {
      log.push(`commit ${items.join(',')} from ${prepared.length} prepared`);
      await commitGates[commits++].promise;
      return prepared.flat();
    },
  }, { maxPending: 100, maxBatch: 100 });
  // The batcher's own step is one setImmediate and promise callbacks: an immediate queued after it runs
  // after all of them. (A 5 ms timer could fire first when the process was descheduled for 5 ms.)
  const tick = () => new Promise((r) => setImmediate(r));
  const first = b.submit(1);
  await tick();
  expect(log).toEqual(['prepare 1', 'commit 1 from 1 prepared']);
  // During the insert: 2 and 3 arrive together, 4 later; both are prepared without waiting for it.
  const second = [b.submit(2), b.submit(3)];
  await tick();
  second.push(b.submit(4));
  await tick();
  expect(log).toEqual(['prepare 1', 'commit 1 from 1 prepared', 'prepare 2,3', 'prepare 4']);
  expect(b.pending).toBe(3); // prepared, not yet committing: they count against maxPending
  commitGates[0].release();
  expect(await first).toBe(10);
  await tick();
  // One insert for everything prepared meanwhile, results in arrival order.
  expect(log[4]).toBe('commit 2,3,4 from 2 prepared');
  commitGates[1].release();
  expect(await Promise.all(second)).toEqual([20, 30, 40]);
});

test('pipeline: prepared items count against the bound, so a stalled insert still ends in 503s', async () => {
  const gate = deferred();
  const b = new DurableBatcher<number, number, number[]>({
    prepare: async (items) => items,
    commit: async (prepared) => { await gate.promise; return prepared.flat(); },
  }, { maxPending: 2, maxBatch: 10 });
  const committing = b.submit(0);
  await new Promise((r) => setImmediate(r)); // 0 prepared and committing (as in the pipeline test above)
  const accepted = [b.submit(1), b.submit(2)];
  await new Promise((r) => setImmediate(r)); // both prepared while 0's insert is stalled
  await expect(b.submit(3)).rejects.toMatchObject({ status: 503 });
  gate.release();
  expect(await Promise.all([committing, ...accepted])).toEqual([0, 1, 2]);
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
