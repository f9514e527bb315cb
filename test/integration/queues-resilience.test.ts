import { connectRedis } from '../../infra/redis';
import { retentionPurgeJob } from '../../workers/jobs/retention-purge';
import { startQueues } from '../../workers/queues';
import type { JobDefinition, WorkerContext } from '../../workers/types';
import { startTestService, type TestService } from '../support/harness';
import { withQueue } from '../support/redis';
import { waitFor } from '../support/wait';

/**
 * Redis here keeps nothing on disk: the repeatable jobs' schedules are put back when it comes back
 * (perhaps empty), and what needs no queue (alert evaluation) runs on the process's own timer while
 * it is down. Before, an emptied Redis stopped alerts until Tally restarted, and an outage paused them.
 */
describe('with a service', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  test('a schedule Redis lost is put back when the connection comes back', async () => {
    const { redis } = svc.running.ctx;
    await withQueue(redis, 'alerts', async (queue) => {
      const scheduled = async () => !!(await queue.getJobScheduler('alerts:every'))?.every;
      await waitFor('the alerts scheduler', scheduled, 10_000);
      await queue.removeJobScheduler('alerts:every'); // as a Redis restarted empty would have it
      expect(await scheduled()).toBe(false);
      redis.client.disconnect(true); // the connection drops and comes back
      await waitFor('the alerts scheduler put back', scheduled, 10_000);
    });
  });
});

test('while Redis is down, a repeatable job that needs no queue runs on the process timer; others wait', async () => {
  const redis = connectRedis('redis://127.0.0.1:1', `down-${process.pid}`);
  await redis.attempted;
  const ran = { local: 0, queued: 0 };
  const def = (queue: string, runsWithoutRedis: boolean): JobDefinition => ({
    queue, defaultJobOptions: {}, repeatEveryMs: 100, runsWithoutRedis,
    handler: async () => void (ran[queue as keyof typeof ran] += 1),
  });
  const queues = startQueues(redis, {} as Omit<WorkerContext, 'enqueue'>, { runWorkers: true, jobs: [def('local', true), def('queued', false)] });
  try {
    await waitFor('three local runs', () => ran.local >= 3);
    expect(ran.queued).toBe(0);
  } finally {
    await queues.close();
    await redis.close();
  }
  const after = ran.local;
  await new Promise((r) => setTimeout(r, 300));
  expect(ran.local).toBe(after); // closed: the timer is gone
});

test('a run that outlasts the period is not started again beside itself', async () => {
  const redis = connectRedis('redis://127.0.0.1:1', `down-slow-${process.pid}`);
  await redis.attempted;
  let running = 0;
  let most = 0;
  let runs = 0;
  const slow: JobDefinition = {
    queue: 'slow', defaultJobOptions: {}, repeatEveryMs: 50, runsWithoutRedis: true,
    handler: async () => {
      runs += 1;
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 180));
      running -= 1;
    },
  };
  const queues = startQueues(redis, {} as Omit<WorkerContext, 'enqueue'>, { runWorkers: true, jobs: [slow] });
  try {
    await waitFor('two slow runs', () => runs >= 2);
    expect(most).toBe(1);
  } finally {
    await queues.close();
    await redis.close();
  }
});

test('close() waits for a timer run under way, so storage is not closed under it', async () => {
  const redis = connectRedis('redis://127.0.0.1:1', `down-close-${process.pid}`);
  await redis.attempted;
  let started = false;
  let finished = false;
  const slow: JobDefinition = {
    queue: 'slow-close', defaultJobOptions: {}, repeatEveryMs: 50, runsWithoutRedis: true,
    handler: async () => {
      started = true;
      await new Promise((r) => setTimeout(r, 400));
      finished = true;
    },
  };
  const queues = startQueues(redis, {} as Omit<WorkerContext, 'enqueue'>, { runWorkers: true, jobs: [slow] });
  try {
    await waitFor('a timer run', () => started);
    await queues.close();
    expect(finished).toBe(true);
  } finally {
    await redis.close();
  }
});

test('a job that runs after start is queued once, delayed, and its daily schedule starts a period later', async () => {
  const prefix = `tally-test-after-start-${process.pid}-${Date.now()}`;
  const runs: number[] = [];
  const def: JobDefinition = {
    queue: 'after-start', defaultJobOptions: {}, repeatEveryMs: 86_400_000, runAfterStartMs: 400,
    handler: async () => void runs.push(Date.now()),
  };
  const open = async () => {
    const redis = connectRedis('redis://127.0.0.1:6379', prefix);
    await redis.attempted;
    const queues = startQueues(redis, {} as Omit<WorkerContext, 'enqueue' | 'redis'>, { runWorkers: true, jobs: [def] });
    await queues.settled(2000);
    return { redis, queues };
  };
  // Two worker processes starting together share the one run after start.
  const started = Date.now();
  const [one, two] = [await open(), await open()];
  try {
    await withQueue(one.redis, 'after-start', async (queue) => {
      const scheduler = await queue.getJobScheduler('after-start:every');
      // BullMQ runs a new `every` scheduler at once; this one's first slot is a day out.
      expect(Number(scheduler!.next)).toBeGreaterThan(started + 86_400_000 - 60_000);
    });
    await waitFor('the run after start', () => runs.length > 0);
    expect(runs[0] - started).toBeGreaterThanOrEqual(400);
    await new Promise((r) => setTimeout(r, 600));
    expect(runs).toHaveLength(1);
  } finally {
    for (const p of [one, two]) {
      await p.queues.close();
      await p.redis.close();
    }
  }
});

test('while Redis is down, the retention purge still runs after start on the process timer, not only a day later', async () => {
  const redis = connectRedis('redis://127.0.0.1:1', `down-purge-${process.pid}`);
  await redis.attempted;
  const runs: number[] = [];
  // The real job's flags, with a short start-up delay and a counting handler.
  const def: JobDefinition = { ...retentionPurgeJob, runAfterStartMs: 200, handler: async () => void runs.push(Date.now()) } as JobDefinition;
  const started = Date.now();
  const queues = startQueues(redis, {} as Omit<WorkerContext, 'enqueue' | 'redis'>, { runWorkers: true, jobs: [def] });
  try {
    await waitFor('the run after start', () => runs.length > 0);
    expect(runs[0] - started).toBeGreaterThanOrEqual(190);
    await new Promise((r) => setTimeout(r, 400));
    expect(runs).toHaveLength(1); // the next is a day out
  } finally {
    await queues.close();
    await redis.close();
  }
});
