import { Queue } from 'bullmq';
import { connectRedis } from '../../infra/redis';
import { startQueues } from '../../workers/queues';
import type { JobDefinition, WorkerContext } from '../../workers/types';
import { startTestService, type TestService } from '../support/harness';

/**
 * Redis here keeps nothing on disk: the repeatable jobs' schedules are put back when it comes back
 * (perhaps empty), and what needs no queue (alert evaluation) runs on the process's own timer while
 * it is down. Before, an emptied Redis stopped alerts until Tally restarted, and an outage paused them.
 */
const until = async (check: () => Promise<boolean>, ms = 10_000) => {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

describe('with a service', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  test('a schedule Redis lost is put back when the connection comes back', async () => {
    const { redis } = svc.running.ctx;
    const connection = redis.duplicateForQueue();
    const queue = new Queue('alerts', { connection, prefix: `${redis.prefix}:bull` });
    try {
      expect(await until(async () => !!(await queue.getJobScheduler('alerts:every'))?.every)).toBe(true);
      await queue.removeJobScheduler('alerts:every'); // as a Redis restarted empty would have it
      expect((await queue.getJobScheduler('alerts:every'))?.every).toBeFalsy();
      redis.client.disconnect(true); // the connection drops and comes back
      expect(await until(async () => !!(await queue.getJobScheduler('alerts:every'))?.every)).toBe(true);
    } finally {
      await queue.close();
      connection.disconnect();
    }
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
    expect(await until(async () => ran.local >= 3, 5000)).toBe(true);
    expect(ran.queued).toBe(0);
  } finally {
    await queues.close();
    await redis.close();
  }
  const after = ran.local;
  await new Promise((r) => setTimeout(r, 300));
  expect(ran.local).toBe(after); // closed: the timer is gone
});
