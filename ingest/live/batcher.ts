import { AppError } from '../../core/errors';

/**
 * Durable micro-batching (group commit). Requests add their item and wait; one write runs at a time
 * and takes everything that arrived meanwhile, so under load many requests share one ClickHouse
 * insert, and at low load an event is written at once. A caller's promise settles only after the
 * write holding its item has finished (the 202 goes out after the commit). The queue is bounded:
 * when it is full the caller is refused with 503 and Retry-After, never silently dropped.
 */
export interface BatcherOptions {
  /** Items waiting (not yet being written) beyond which new items are refused. */
  maxPending: number;
  /** Largest single write. */
  maxBatch: number;
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
  private writing: Promise<void> | null = null;
  private closed = false;

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
      // setImmediate lets every request parsed in this turn of the event loop join the batch.
      if (!this.writing) this.writing = new Promise((r) => setImmediate(r)).then(() => this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      try {
        const results = await this.write(batch.map((e) => e.item));
        batch.forEach((e, i) => e.resolve(results[i]));
      } catch (err) {
        for (const e of batch) e.reject(err);
      }
    }
    this.writing = null;
  }

  /** Refuse new items and wait until everything accepted has been written. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
  }
}
