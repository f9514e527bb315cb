import { AppError } from '../../core/errors';

/**
 * Durable micro-batching (group commit) as a two-stage pipeline. Requests add their item and wait.
 * The first stage (`prepare`: session state, one batch at a time in arrival order) takes whatever is
 * queued whenever it is free; prepared batches accumulate, and the second stage (`commit`: the insert)
 * takes all of them as one write whenever it is free. So an event arriving during an insert is
 * prepared during that insert and written by the next one, under load many requests share one insert,
 * and at low load an event is written at once. A caller's promise settles only after the commit
 * holding its item has finished: the 202 goes out after the insert. Memory is bounded: when the items
 * waiting (queued or prepared, not yet committing) reach `maxPending`, the caller is refused with 503
 * and Retry-After, never silently dropped.
 *
 * Why two stages: measured at 10k events/s, preparing a batch (two Redis round trips through a busy
 * event loop) took as long as inserting it; one after the other, every request waited for both.
 */
export interface BatcherOptions {
  /** Items waiting (queued, being prepared or prepared: not yet committing) beyond which new items are refused. */
  maxPending: number;
  /** Largest single prepare, and the commit's size it stops adding prepared batches at. */
  maxBatch: number;
}

/** The stages of a write. Each runs one call at a time; items go through both in arrival order. */
export interface WritePipeline<T, P, R> {
  prepare(items: T[]): Promise<P>;
  /** One write for several prepared batches (in order; `items` is theirs, concatenated). One result per item. */
  commit(prepared: P[], items: T[]): Promise<R[]>;
}

interface Entry<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

interface Prepared<T, P, R> {
  batch: Entry<T, R>[];
  prepared: P;
}

export const overloaded = () =>
  new AppError(503, 'overloaded', 'Ingest is at capacity; retry shortly.', undefined, { 'Retry-After': '2' });

export const shuttingDown = () =>
  new AppError(503, 'overloaded', 'The server is shutting down; retry shortly.', undefined, { 'Retry-After': '5' });

/** A one-stage write is a pipeline whose prepare passes the items through. */
function asPipeline<T, R, P>(write: ((items: T[]) => Promise<R[]>) | WritePipeline<T, P, R>): WritePipeline<T, P, R> {
  if (typeof write !== 'function') return write;
  return { prepare: async () => undefined as P, commit: (_p, items) => write(items) };
}

export class DurableBatcher<T, R, P = unknown> {
  private queue: Entry<T, R>[] = [];
  private readonly stages: WritePipeline<T, P, R>;
  private preparing = false;
  /** Items in the running prepare: accepted, not yet committing, so they count against the bound. */
  private preparingItems = 0;
  private committing = false;
  /** Prepared batches waiting for the commit stage, in order, and how many items they hold. */
  private ready: Prepared<T, P, R>[] = [];
  private readyItems = 0;
  private scheduled = false;
  private closed = false;
  private idle: (() => void)[] = [];

  constructor(write: ((items: T[]) => Promise<R[]>) | WritePipeline<T, P, R>, private readonly opts: BatcherOptions) {
    this.stages = asPipeline(write);
  }

  /** Items accepted and not yet in a running commit. */
  get pending(): number {
    return this.queue.length + this.preparingItems + this.readyItems;
  }

  submit(item: T): Promise<R> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (this.pending >= this.opts.maxPending) return Promise.reject(overloaded());
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && !this.preparing) {
        // setImmediate lets every request parsed in this turn of the event loop join the batch.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    if (!this.committing && this.ready.length > 0) this.commitNext();
    if (!this.preparing && this.queue.length > 0) this.prepareNext();
    if (this.isIdle()) for (const fn of this.idle.splice(0)) fn();
  }

  private prepareNext(): void {
    const batch = this.queue.splice(0, this.opts.maxBatch);
    this.preparing = true;
    this.preparingItems = batch.length;
    this.stages.prepare(batch.map((e) => e.item)).then(
      (prepared) => {
        this.ready.push({ batch, prepared });
        this.readyItems += batch.length;
      },
      (err: unknown) => batch.forEach((e) => e.reject(err)),
    ).finally(() => {
      this.preparing = false;
      this.preparingItems = 0;
      this.pump();
    });
  }

  /** Every prepared batch so far, up to maxBatch items (at least one batch), as one write. */
  private commitNext(): void {
    let take = 0;
    let items = 0;
    while (take < this.ready.length && (take === 0 || items + this.ready[take].batch.length <= this.opts.maxBatch)) {
      items += this.ready[take].batch.length;
      take++;
    }
    const parts = this.ready.splice(0, take);
    this.readyItems -= items;
    const entries = parts.flatMap((p) => p.batch);
    this.committing = true;
    this.stages.commit(parts.map((p) => p.prepared), entries.map((e) => e.item))
      .then((results) => entries.forEach((e, i) => e.resolve(results[i])), (err: unknown) => entries.forEach((e) => e.reject(err)))
      .finally(() => {
        this.committing = false;
        this.pump();
      });
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && !this.preparing && !this.committing && this.ready.length === 0;
  }

  /** Refuse new items and wait until everything accepted has been written. */
  close(): Promise<void> {
    this.closed = true;
    if (this.isIdle() && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
