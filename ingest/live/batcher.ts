import { AppError } from '../../core/errors';

/**
 * Durable micro-batching (group commit). Requests add their item and wait; a write takes everything
 * that arrived meanwhile, so under load many requests share one ClickHouse insert, and at low load an
 * event is written at once. Up to `maxInFlight` writes run together (the engine inserts on several
 * threads; a new batch need not wait for the previous insert to finish). A caller's promise settles
 * only after the write holding its item has finished: the 202 goes out after the commit. The queue is
 * bounded: when it is full the caller is refused with 503 and Retry-After, never silently dropped.
 */
export interface BatcherOptions {
  /** Items waiting (not yet being written) beyond which new items are refused. */
  maxPending: number;
  /** Largest single write. */
  maxBatch: number;
  /** Writes running at the same time. */
  maxInFlight: number;
}

interface Entry<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

export const overloaded = () =>
  new AppError(503, 'overloaded', 'Ingest is at capacity; retry shortly.', undefined, { 'Retry-After': '2' });

export const shuttingDown = () =>
  new AppError(503, 'overloaded', 'The server is shutting down; retry shortly.', undefined, { 'Retry-After': '5' });

export class DurableBatcher<T, R> {
  private queue: Entry<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private closed = false;
  private idle: (() => void)[] = [];

  /** `write` returns one result per item, in order; throwing fails the whole batch. */
  constructor(private readonly write: (items: T[]) => Promise<R[]>, private readonly opts: BatcherOptions) {}

  get pending(): number {
    return this.queue.length;
  }

  submit(item: T): Promise<R> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (this.queue.length >= this.opts.maxPending) return Promise.reject(overloaded());
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && this.inFlight < this.opts.maxInFlight) {
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
    while (this.queue.length > 0 && this.inFlight < this.opts.maxInFlight) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight++;
      this.write(batch.map((e) => e.item))
        .then((results) => batch.forEach((e, i) => e.resolve(results[i])), (err: unknown) => batch.forEach((e) => e.reject(err)))
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
    if (this.queue.length === 0 && this.inFlight === 0) for (const fn of this.idle.splice(0)) fn();
  }

  /** Refuse new items and wait until everything accepted has been written. */
  close(): Promise<void> {
    this.closed = true;
    if (this.queue.length === 0 && this.inFlight === 0 && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
