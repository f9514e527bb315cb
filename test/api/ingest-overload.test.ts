import { collectorOf } from '../../ingest/live/module';
import { startTestService, type TestService } from '../support/harness';
import { request, type HttpResult } from '../support/http';
import { waitFor } from '../support/wait';

/**
 * PRODUCT.md §3 over real HTTP: when the ingest buffer is full the answer is 503 `overloaded` with
 * Retry-After, never a silent drop, and every 202 is a stored row. The buffer is made tiny
 * (TALLY_INGEST_MAX_PENDING) and is filled deterministically, not by timing luck: chDB runs one
 * statement at a time per connection, so a slow query started on the collector's own connection (its
 * `ingest` lane) holds its insert back, and events sent meanwhile can only wait in the buffer or be
 * refused.
 */
const MAX_PENDING = 3;
const BURST = 40;
/** 20 one-row blocks of 250 ms: the engine stays busy for about 5 s, far longer than the burst takes. */
const HOLD_ENGINE_SQL = 'SELECT count() AS n FROM numbers(20) WHERE sleepEachRow(0.25) = 0 SETTINGS max_block_size = 1';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ TALLY_INGEST_MAX_PENDING: String(MAX_PENDING) });
});
afterAll(() => svc.stop());

const post = (domain: string, i: number): Promise<HttpResult> =>
  request('POST', `${svc.plainBase}/api/event`, {
    body: { name: 'pageview', url: `https://${domain}/burst/${i}`, domain },
    headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' },
  });

/**
 * Resolves once the engine runs HOLD_ENGINE_SQL (system.processes lists every lane's statements),
 * asked on a lane of its own so the question never queues behind the statement it looks for. Fixed
 * sleeps stood in for this and raced the engine on a loaded machine.
 */
async function engineHeld(): Promise<void> {
  const probe = svc.running.ctx.store.dedicated('probe');
  try {
    await waitFor('the slow query to reach the engine', async () => {
      const [row] = await probe.query<{ n: number }>(
        "SELECT toUInt32(count()) AS n FROM system.processes WHERE query LIKE '%sleepEachRow%' AND query NOT LIKE '%system.processes%'");
      return Number(row.n) > 0;
    });
  } finally {
    await probe.close();
  }
}

async function storedRows(siteId: string): Promise<number> {
  const store = svc.running.ctx.store;
  const [row] = await store.query<{ n: number }>(`SELECT count() AS n FROM ${store.table('events')} WHERE site_id = {s:UUID}`, { s: siteId });
  return row.n;
}

test('a full ingest buffer answers 503 overloaded with Retry-After, and every 202 is a stored event', async () => {
  const t = await svc.tenant({ domain: 'burst.example' });
  const collector = collectorOf(svc.running.ctx)!;
  // Warm the site cache while the engine is free, so burst events reach the buffer without a lookup.
  expect((await post(t.domain, 0)).status).toBe(202);
  const overloadedBefore = collector.stats.overloaded;

  const lane = svc.running.ctx.store.dedicated('ingest');
  const hold = lane.query<{ n: number }>(HOLD_ENGINE_SQL).finally(() => lane.close());
  await engineHeld(); // the slow query reaches the engine first
  // A lead event takes the insert stage (its insert then waits behind the slow query); what arrives
  // while an insert runs waits in the buffer for it to end ...
  const received = collector.stats.received;
  const lead = post(t.domain, 1);
  // Received, and nothing left before the insert stage: the lead's insert is under way (site and salt
  // are cached by the warm-up, so the event reaches the buffer as it is received).
  await waitFor('the lead event to reach the insert stage', () => collector.stats.received === received + 1 && collector.pending === 0);
  // ... so of the burst, exactly MAX_PENDING events can wait in the buffer and the rest are refused.
  const burst = await Promise.all(Array.from({ length: BURST }, (_, i) => post(t.domain, i + 2)));
  const answers = [await lead, ...burst];
  expect(await hold).toEqual([{ n: 20 }]);

  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s !== 202 && s !== 503)).toEqual([]);
  const refused = answers.filter((a) => a.status === 503);
  expect(refused).toHaveLength(BURST - MAX_PENDING);
  for (const r of refused) {
    expect(r.headers['retry-after']).toBe('2');
    expect(r.headers['access-control-expose-headers']).toBe('Retry-After'); // or a tracker on another origin cannot read it
    expect(r.body).toEqual({ error: expect.objectContaining({ code: 'overloaded', message: expect.stringContaining('capacity') }) });
  }
  expect(collector.stats.overloaded - overloadedBefore).toBe(refused.length);

  const accepted = statuses.filter((s) => s === 202).length;
  expect(accepted).toBe(1 + MAX_PENDING);
  // The 202s were sent after their insert committed, so the rows are there now: warm-up + accepted.
  expect(await storedRows(t.siteId)).toBe(1 + accepted);
  expect(collector.pending).toBe(0);
});

test('a slow report does not hold acknowledgements back: ingest inserts on a connection of their own', async () => {
  const t = await svc.tenant({ domain: 'lane.example' });
  expect((await post(t.domain, 0)).status).toBe(202);
  // About 5 s of engine time on the store reports and rollup feeds use.
  const store = svc.running.ctx.store;
  let holdDone = false;
  const hold = store.query(HOLD_ENGINE_SQL).then(() => (holdDone = true));
  await engineHeld();
  const answer = await post(t.domain, 1);
  expect(answer.status).toBe(202);
  // Acknowledged (so committed) while the slow statement still ran.
  expect(holdDone).toBe(false);
  await hold;
  expect(await storedRows(t.siteId)).toBe(2);
});
