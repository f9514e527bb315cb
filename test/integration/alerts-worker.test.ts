import { Queue } from 'bullmq';
import { startTestService, type TestService } from '../support/harness';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('the alert evaluator is scheduled as a repeatable BullMQ job every minute', async () => {
  const { redis } = svc.running.ctx;
  const connection = redis.duplicateForQueue();
  const queue = new Queue('alerts', { connection, prefix: `${redis.prefix}:bull` });
  try {
    let scheduler: Awaited<ReturnType<Queue['getJobScheduler']>>;
    // The scheduler hash can be seen before all its fields are written: wait for `every`.
    for (let i = 0; i < 50 && !scheduler?.every; i++) {
      scheduler = await queue.getJobScheduler('alerts:every');
      if (!scheduler) await new Promise((r) => setTimeout(r, 100));
    }
    expect(scheduler).toMatchObject({ key: 'alerts:every', every: 60_000, name: 'alerts' });
    expect(svc.running.ctx.queues.definition('alerts')).toMatchObject({ repeatEveryMs: 60_000, concurrency: 1 });
  } finally {
    await queue.close();
    connection.disconnect();
  }
});
