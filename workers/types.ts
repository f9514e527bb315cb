import type { JobsOptions } from 'bullmq';
import type { Store } from '../clickhouse/store';
import type { Repos } from '../model/repos';

export interface WorkerContext {
  store: Store;
  repos: Repos;
}

/**
 * One job kind = one file exporting one of these. Policy (attempts, backoff, retention) sits here,
 * next to the handler, so every queue's behaviour is read in one place.
 */
export interface JobDefinition<P = unknown> {
  queue: string;
  defaultJobOptions: JobsOptions;
  concurrency?: number;
  /** Repeatable job: enqueued every N ms with a stable scheduler id. */
  repeatEveryMs?: number;
  handler(payload: P, ctx: WorkerContext): Promise<unknown>;
}
