import type { EventEmitter } from 'node:events';
import { Queue, Worker, type Job } from 'bullmq';
import { settlesWithin } from '../core/deadline';
import { queueUnavailable } from '../core/errors';
import { logger } from '../core/logger';
import type { RedisHandle } from '../infra/redis';
import { JOBS } from './registry';
import type { JobDefinition, WorkerContext } from './types';

const ENQUEUE_TIMEOUT_MS = 3000;
/**
 * How often the repeatable jobs' schedules are put back. Redis here keeps nothing on disk: a restart
 * or failover that comes back empty (or a flush while connected) dropped them, and alerts, the
 * search refresh and the backfill reconciler stopped until Tally restarted. upsertJobScheduler is
 * idempotent, so re-asserting costs one command per job kind.
 */
const SCHEDULE_REASSERT_MS = 5 * 60_000;

export interface Queues {
  /** False while Redis is unreachable; callers answer 503 queue_unavailable. */
  available(): boolean;
  /** Enqueue; a stable jobId makes a repeat of the same request a no-op. Throws 503 when Redis is down. */
  enqueue<P>(queue: string, payload: P, jobId?: string): Promise<void>;
  /**
   * Resolves once the repeatable jobs are scheduled (at most `maxMs`; at once while Redis is down), so
   * a started service has its schedules in place.
   */
  settled(maxMs: number): Promise<void>;
  /** Run a job kind's handler directly (tests and the reconciler). */
  definition(queue: string): JobDefinition | undefined;
  close(): Promise<void>;
}

/**
 * TRAP (BullMQ 5): closing a Queue or Worker whose connection is still connecting (a quick stop, or
 * Redis down) removes every listener from that connection, and its pending start-up then fails with
 * an 'error' event nobody hears: an unhandled error. A listener put back after close absorbs it.
 */
async function closeQuietly(owner: Queue | Worker): Promise<void> {
  const internals = owner as unknown as { connection?: EventEmitter; blockingConnection?: EventEmitter };
  try {
    await owner.close();
  } finally {
    for (const c of [internals.connection, internals.blockingConnection]) c?.on('error', () => undefined);
  }
}

/**
 * A scheduler's repeat options. BullMQ runs a new `every` scheduler at once; a job that also runs after
 * start (runAfterStartMs) has its first scheduled run a period later instead, so a fresh Redis does not
 * run it twice at start (nor before the delay its start-up run waits). An existing scheduler keeps its
 * slot whatever startDate says (re-asserting it every 5 minutes moves nothing).
 */
function scheduleOf(def: JobDefinition): { every: number; startDate?: number } {
  const every = def.repeatEveryMs!;
  return def.runAfterStartMs ? { every, startDate: Date.now() + every } : { every };
}

export function startQueues(
  redis: RedisHandle,
  base: Omit<WorkerContext, 'enqueue' | 'redis'>,
  opts: { runWorkers: boolean; jobs?: JobDefinition[] },
): Queues {
  const jobs = opts.jobs ?? JOBS;
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  const prefix = `${redis.prefix}:bull`;

  // TRAP: BullMQ objects re-emit connection errors; an 'error' event nobody listens to crashes the
  // process (seen when a shutdown closes the connection under a pending scheduler call).
  const quiet = () => undefined; // outages are reported once by the main Redis handle

  const pending: Promise<unknown>[] = [];
  /** Timer runs under way (Redis down), which close() waits for: storage closes after them. */
  const timerRuns = new Set<Promise<unknown>>();
  const ctx: WorkerContext = { ...base, redis, enqueue: (queue, payload, jobId) => api.enqueue(queue, payload, jobId) };
  let started = false;
  const repeatable = opts.runWorkers ? jobs.filter((d) => d.repeatEveryMs) : [];
  const scheduleAll = () => Promise.all(repeatable.map((def) => queues.get(def.queue)
    ?.upsertJobScheduler(`${def.queue}:every`, scheduleOf(def), { name: def.queue, data: {} })
    .catch((err: Error) => logger.warn({ err: err.message }, 'could not schedule repeatable job'))));
  // Once per process start, not per reconnect: the jobs that run soon after a start.
  const runAfterStart = () => Promise.all(repeatable.filter((d) => d.runAfterStartMs).map((def) => queues.get(def.queue)
    ?.add(def.queue, {}, { jobId: `${def.queue}-after-start`, delay: def.runAfterStartMs, removeOnComplete: true, removeOnFail: true })
    .catch((err: Error) => logger.warn({ err: err.message }, 'could not queue the run after start'))));
  const timers: NodeJS.Timeout[] = [];
  if (repeatable.length) {
    timers.push(setInterval(() => void (started && redis.isUp() && scheduleAll()), SCHEDULE_REASSERT_MS).unref());
  }
  // While Redis is down, what needs no queue runs on this process's own timer (alerts keep firing),
  // one timer run at a time (a run can outlast the period); close() waits for the one under way. A
  // job serialises its own runs within a process (evaluateAlerts does), so a queue run starting as
  // Redis returns waits for the timer's. Across worker processes each runs its own timer during an
  // outage: alert firings are keyed by id, so at worst one minute's states are written twice.
  // A job that also runs after start does so on the timer too when Redis is down then: a daily job
  // (the retention purge) would otherwise first run a day after a start made during an outage.
  for (const def of repeatable.filter((d) => d.runsWithoutRedis)) {
    let running: Promise<unknown> | null = null;
    const tick = () => {
      if (running || redis.isUp()) return;
      const run: Promise<unknown> = def.handler({}, ctx, { made: 0, max: 1 })
        .catch((err: Error) => logger.warn({ queue: def.queue, err: err.message }, 'job failed'))
        .finally(() => {
          running = null;
          timerRuns.delete(run);
        });
      running = run;
      timerRuns.add(run);
    };
    timers.push(setInterval(tick, def.repeatEveryMs!).unref());
    if (def.runAfterStartMs) timers.push(setTimeout(tick, def.runAfterStartMs).unref());
  }

  // TRAP (BullMQ 5, ioredis 5): a Queue made while Redis is unreachable keeps its first connect()
  // pending through the retries, and when Redis came back it rejected where nobody listened: the
  // process died. Queues and workers are therefore made once Redis is first up; until then every
  // enqueue is 503 queue_unavailable anyway.
  redis.onUp(() => {
    // Back after an outage: perhaps an empty Redis, so the schedules are put back.
    if (started) return void scheduleAll();
    started = true;
    for (const def of jobs) {
      const q = new Queue(def.queue, { connection: redis.bullConnection(), prefix, defaultJobOptions: def.defaultJobOptions });
      q.on('error', quiet);
      queues.set(def.queue, q);
    }
    if (!opts.runWorkers) return;
    for (const def of jobs) {
      const worker = new Worker(def.queue, (job: Job) => def.handler(job.data, ctx, { made: job.attemptsMade, max: job.opts.attempts ?? 1 }), {
        connection: redis.bullConnection(),
        prefix,
        concurrency: def.concurrency ?? 1,
      });
      worker.on('failed', (job, err) => logger.warn({ queue: def.queue, jobId: job?.id, err: err.message }, 'job failed'));
      worker.on('error', quiet);
      workers.push(worker);
    }
    pending.push(scheduleAll(), runAfterStart());
  });

  const api: Queues = {
    available: () => redis.isUp(),
    async enqueue(queue, payload, jobId) {
      if (!api.definition(queue)) throw new Error(`unknown queue ${queue}`);
      const q = queues.get(queue);
      if (!q || !redis.isUp()) throw queueUnavailable();
      // TRAP: the queue connection retries forever (BullMQ needs that), so an add issued just as
      // Redis drops would hang the request; give up after ENQUEUE_TIMEOUT_MS and answer 503.
      const added = q.add(queue, payload, jobId ? { jobId } : undefined);
      if (!(await settlesWithin(added, ENQUEUE_TIMEOUT_MS))) {
        added.catch(() => undefined); // a late failure has nobody to tell
        throw queueUnavailable();
      }
      await added.catch(() => {
        throw queueUnavailable();
      });
    },
    async settled(maxMs) {
      await settlesWithin(Promise.allSettled(pending), maxMs);
    },
    definition: (queue) => jobs.find((j) => j.queue === queue),
    async close() {
      for (const t of timers) clearInterval(t); // Node clears a setTimeout this way too
      await Promise.allSettled([...pending, ...timerRuns]);
      await Promise.allSettled(workers.map((w) => closeQuietly(w)));
      await Promise.allSettled([...queues.values()].map((q) => closeQuietly(q)));
    },
  };
  return api;
}
