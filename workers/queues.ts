import { Queue, Worker, type Job } from 'bullmq';
import { queueUnavailable } from '../core/errors';
import { logger } from '../core/logger';
import type { RedisHandle } from '../infra/redis';
import { JOBS } from './registry';
import type { JobDefinition, WorkerContext } from './types';

const ENQUEUE_TIMEOUT_MS = 3000;

export interface Queues {
  /** False while Redis is unreachable; callers answer 503 queue_unavailable. */
  available(): boolean;
  /** Enqueue; a stable jobId makes a repeat of the same request a no-op. Throws 503 when Redis is down. */
  enqueue<P>(queue: string, payload: P, jobId?: string): Promise<void>;
  /** Run a job kind's handler directly (tests and the reconciler). */
  definition(queue: string): JobDefinition | undefined;
  close(): Promise<void>;
}

export function startQueues(
  redis: RedisHandle,
  ctx: WorkerContext,
  opts: { runWorkers: boolean; jobs?: JobDefinition[] },
): Queues {
  const jobs = opts.jobs ?? JOBS;
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  // TRAP: closing a queue while its job scheduler's connection is still initialising makes BullMQ
  // emit an error on an emitter nobody listens to (fatal); close() waits for these first.
  const scheduling: Promise<unknown>[] = [];
  const ready: Promise<unknown>[] = [];
  const readyQueues = new Set<Queue>();
  const connection = redis.duplicateForQueue();
  connection.on('error', () => undefined); // reported once by the main handle
  const prefix = `${redis.prefix}:bull`;

  for (const def of jobs) {
    const queue = new Queue(def.queue, { connection, prefix, defaultJobOptions: def.defaultJobOptions });
    // TRAP: a Queue re-emits connection errors; without a listener Node treats them as fatal.
    queue.on('error', () => undefined);
    queue.waitUntilReady().then(() => readyQueues.add(queue), () => undefined);
    queues.set(def.queue, queue);
  }

  let started = false;
  redis.onUp(() => {
    if (started || !opts.runWorkers) return;
    started = true;
    for (const def of jobs) {
      const worker = new Worker(def.queue, (job: Job) => def.handler(job.data, ctx), {
        connection: redis.duplicateForQueue(),
        prefix,
        concurrency: def.concurrency ?? 1,
      });
      worker.on('failed', (job, err) => logger.warn({ queue: def.queue, jobId: job?.id, err: err.message }, 'job failed'));
      worker.on('error', () => undefined);
      ready.push(new Promise<void>((resolve) => worker.once('ready', () => resolve())));
      workers.push(worker);
      if (def.repeatEveryMs) {
        scheduling.push(
          queues
            .get(def.queue)!
            .upsertJobScheduler(`${def.queue}:every`, { every: def.repeatEveryMs }, { name: def.queue, data: {} })
            .catch((err: Error) => logger.warn({ err: err.message }, 'could not schedule repeatable job')),
        );
      }
    }
  });

  return {
    available: () => redis.isUp(),
    async enqueue(queue, payload, jobId) {
      const q = queues.get(queue);
      if (!q) throw new Error(`unknown queue ${queue}`);
      if (!redis.isUp()) throw queueUnavailable();
      // TRAP: the queue connection retries forever (BullMQ needs that), so an add issued just as
      // Redis drops would hang the request; give up after ENQUEUE_TIMEOUT_MS and answer 503.
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('enqueue timed out')), ENQUEUE_TIMEOUT_MS);
      });
      try {
        await Promise.race([q.add(queue, payload, jobId ? { jobId } : undefined), timedOut]);
      } catch {
        throw queueUnavailable();
      } finally {
        clearTimeout(timer);
      }
    },
    definition: (queue) => jobs.find((j) => j.queue === queue),
    async close() {
      await Promise.allSettled(scheduling);
      // Same trap for a worker's blocking connection: let it finish connecting (bounded) first.
      await Promise.race([Promise.allSettled(ready), new Promise((r) => setTimeout(r, 2000).unref())]);
      await Promise.allSettled(workers.map((w) => w.close()));
      // A queue whose connection never became ready (Redis down) is not closed: closing it mid-init
      // trips the trap above. Dropping the shared connection below ends it quietly.
      await Promise.allSettled([...readyQueues].map((q) => q.close()));
      connection.disconnect();
    },
  };
}
