import { startTestService, type TestService } from '../support/harness';
import { withQueue } from '../support/redis';
import { waitFor } from '../support/wait';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('the alert evaluator is scheduled as a repeatable BullMQ job every minute', async () => {
  await withQueue(svc.running.ctx.redis, 'alerts', async (queue) => {
    // The scheduler hash can be seen before all its fields are written: wait for `every`.
    await waitFor('the alerts scheduler', async () => !!(await queue.getJobScheduler('alerts:every'))?.every, 5000);
    expect(await queue.getJobScheduler('alerts:every')).toMatchObject({ key: 'alerts:every', every: 60_000, name: 'alerts' });
    expect(svc.running.ctx.queues.definition('alerts')).toMatchObject({ repeatEveryMs: 60_000, concurrency: 1 });
  });
});
