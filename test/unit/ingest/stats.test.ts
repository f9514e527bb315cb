import { IngestStats } from '../../../ingest/live/stats';

/** The latency figures `events stats` shows an operator. */
test('acknowledgement latency: none before the first 202, then percentiles of what was recorded', () => {
  const stats = new IngestStats();
  expect(stats.snapshot().ack_ms).toBeNull();
  for (let i = 0; i < 98; i++) stats.recordAck(1.5);
  stats.recordAck(40);
  stats.recordAck(250);
  const ack = stats.snapshot().ack_ms!;
  expect(ack.count).toBe(100);
  expect(ack.p50).toBeCloseTo(1.5, 1);
  expect(ack.p99).toBeCloseTo(40, 0);
  expect(ack.max).toBeCloseTo(250, 0);
});

test('event-loop delay is the lateness alone, not the monitoring timer\'s period plus it', async () => {
  const stats = new IngestStats();
  await new Promise((r) => setTimeout(r, 200));
  const blockedUntil = Date.now() + 80;
  while (Date.now() < blockedUntil); // one callback 80 ms late
  await new Promise((r) => setTimeout(r, 100));
  const delay = stats.snapshot().event_loop_delay_ms;
  expect(delay.max).toBeGreaterThanOrEqual(60);
  // Mostly on time: with the 10 ms period counted in, the median would read 10 ms or more.
  expect(delay.p50).toBeLessThan(8);
});
