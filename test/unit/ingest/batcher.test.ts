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
  }, { maxPending: 100, maxBatch: 100, maxInFlight: 1 });
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
  const b = new DurableBatcher<number, number>(async (items) => { await gate.promise; return items; }, { maxPending: 2, maxBatch: 10, maxInFlight: 1 });
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
  }, { maxPending: 10, maxBatch: 10, maxInFlight: 1 });
  await expect(Promise.all([b.submit(1), b.submit(2)])).rejects.toThrow('storage down');
  expect(await b.submit(3)).toBe(3);
});

test('close waits for every accepted item and refuses new ones', async () => {
  const gate = deferred();
  const written: number[] = [];
  const b = new DurableBatcher<number, number>(async (items) => { await gate.promise; written.push(...items); return items; }, { maxPending: 10, maxBatch: 1, maxInFlight: 1 });
  const accepted = [b.submit(1), b.submit(2)];
  const closing = b.close();
  await expect(b.submit(3)).rejects.toMatchObject({ status: 503 });
  gate.release();
  await closing;
  expect(written).toEqual([1, 2]);
  await Promise.all(accepted);
});

test('with two writes in flight a new batch starts while the previous insert runs', async () => {
  const gates = [deferred(), deferred()];
  const started: number[][] = [];
  const b = new DurableBatcher<number, number>(async (items) => {
    started.push(items);
    await gates[started.length - 1]?.promise;
    return items;
  }, { maxPending: 10, maxBatch: 10, maxInFlight: 2 });
  const first = b.submit(1);
  await new Promise((r) => setImmediate(r));
  const second = b.submit(2);
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual([[1], [2]]); // the second write started before the first finished
  const third = b.submit(3);
  await new Promise((r) => setTimeout(r, 10));
  expect(started).toHaveLength(2); // at most two at a time
  gates[1].release();
  expect(await second).toBe(2);
  gates[0].release();
  expect(await Promise.all([first, third])).toEqual([1, 3]);
});
