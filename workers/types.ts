import type { JobsOptions } from 'bullmq';
import type { Store } from '../clickhouse/store';
import type { Config } from '../core/config';
import type { RedisHandle } from '../infra/redis';
import type { SecretBox } from '../infra/secrets';
import type { Repos } from '../model/repos';

export interface WorkerContext {
  store: Store;
  repos: Repos;
  config: Config;
  secrets: SecretBox;
  /** Queue another job (the reconciler re-queues what Redis lost); set by startQueues. */
  enqueue<P>(queue: string, payload: P, jobId?: string): Promise<void>;
  /** The queues' Redis (leases across worker processes); set by startQueues. */
  redis: RedisHandle;
}

/** Which try of a job this is: a handler records a failure as final only on the last one. */
export interface Attempt {
  made: number;
  max: number;
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
  /**
   * A repeatable job that needs no queue and is idempotent: while Redis is down each worker process
   * runs it itself on its own timer, so it does not pause with the queues.
   */
  runsWithoutRedis?: boolean;
  /**
   * A repeatable job also run once this long after each worker process starts (a daily job would
   * otherwise first run a day after it was scheduled, and a restart would not bring it forward).
   * Workers starting within that time share the one run (a fixed job id).
   */
  runAfterStartMs?: number;
  handler(payload: P, ctx: WorkerContext, attempt: Attempt): Promise<unknown>;
}
