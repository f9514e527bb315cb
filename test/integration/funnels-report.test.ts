import { isoToCh } from '../../clickhouse/meta';
import { setClock } from '../../core/clock';
import { visitorIdFor } from '../../ingest/hash';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/**
 * The funnel report over real chDB, with events imported through the admin command (the real
 * ingest enrichment and sessionisation), each visitor a scripted path.
 */
let svc: TestService;
let t: Tenant;
const T0 = Date.parse('2026-02-10T09:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const WINDOW = '?from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z';
const MARCH_2 = 20 * 24 * 60;
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const CRAWLER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

const event = (visitor: string, name: string, path: string, minutes: number, ua = UA) =>
  JSON.stringify({ ts: at(minutes), name, url: `https://${t.domain}${path}`, visitor, user_agent: ua });
const view = (v: string, path: string, m: number, ua = UA) => event(v, 'pageview', path, m, ua);
const goal = (v: string, name: string, m: number, ua = UA) => event(v, name, '/', m, ua);
const payment = (id: string, visitor: string, status: string, minutes: number) => ({
  site_id: t.siteId, provider: 'stripe', payment_id: id, visitor_id: visitorIdFor(t.siteId, visitor), session_id: '0',
  amount_cents: 900, refunded_cents: 0, currency: 'USD', status, paid_at: isoToCh(at(minutes)), version: 1, is_deleted: 0,
});

beforeAll(async () => {
  setClock('2026-03-05T12:00:00Z');
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['funnels:write', 'goals:write', 'analytics:read'] });
  const lines = [
    view('v1', '/pricing', 0), goal('v1', 'Signup', 10),
    view('v2', '/pricing', 0), goal('v2', 'Signup', 30),
    view('v3', '/pricing', 0), goal('v3', 'checkout_completed', 20),
    goal('v4', 'Signup', 0), view('v4', '/pricing', 5), // wrong order: only the first step counts
    view('v5', '/pricing', 0), goal('v5', 'Signup', 2 * 24 * 60), // second step two days later
    view('v6', '/about', 0),
    view('v7', '/pricing', 0, CRAWLER), goal('v7', 'Signup', 5, CRAWLER), // a crawler
    view('v8', '/pricing', 0), view('v8', '/docs/api/keys', 20), // reaches the page-rule goal
    view('v9', '/pricing', -60 * 24 * 30), goal('v9', 'Signup', -60 * 24 * 30 + 5), // before the window
    view('v10', '/same', 0), goal('v10', 'SameMs', 0), // two events in the same millisecond
    view('v11', '/edge', 0), goal('v11', 'Edge', 60), view('v12', '/edge', 0), goal('v12', 'Edge', 61), // at and past an hour
    view('v18', '/edge', 0), goal('v18', 'Edge', 60 + 1 / 60_000), // an hour and 1 ms
    // Same millisecond, overlapping steps (an import with whole seconds), on 2 March (outside WINDOW), in file orders both ways:
    view('v13', '/tied/b', MARCH_2), view('v13', '/tied', MARCH_2), // matches step 1 only, then steps 1 and 2
    view('v14', '/tied', MARCH_2), view('v14', '/tied/b', MARCH_2),
    view('v15', '/tied/b', MARCH_2), view('v15', '/tied/b', MARCH_2), // two events matching the same two steps
    view('v16', '/tied/b', MARCH_2), // one event matching both steps: one step only
    view('v17', '/spaced', MARCH_2 - 1), goal('v17', 'Spaced ', MARCH_2), // an event name sent with a trailing space
  ];
  expect(await svc.admin('events import', { site: t.siteId }, lines.join('\n'))).toMatchObject({ imported: lines.length, rejected: 0 });
  // Payments arrive from the provider (no endpoint posts one): written as the payment worker would.
  await svc.running.ctx.store.insert('payments', [payment('pi_1', 'v1', 'succeeded', 60), payment('pi_2', 'v2', 'failed', 60)]);
  for (const body of [
    { site_id: t.siteId, name: 'Docs visit', kind: 'page', path_pattern: '/docs/**' },
    { site_id: t.siteId, name: 'Checkout done', kind: 'event', event_name: 'checkout_completed' },
  ]) {
    expect((await svc.api('POST', '/goals', { token: t.token, body })).status).toBe(201);
  }
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

async function create(steps: unknown[], windowSeconds = 86400): Promise<string> {
  const res = await svc.api('POST', `/sites/${t.siteId}/funnels`, { token: t.token, body: { name: 'f', steps, window_seconds: windowSeconds } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}
const report = (id: string, qs = WINDOW) => svc.api('GET', `/sites/${t.siteId}/funnels/${id}/report${qs}`, { token: t.token });
const visitors = (res: { body: { data: { steps: { visitors: number }[] } } }) => res.body.data.steps.map((s) => s.visitors);

test('per step: visitors reaching it in order within the window, conversion from first and previous', async () => {
  const id = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }, { kind: 'payment' }]);
  const res = await report(id);
  expect(res.status).toBe(200);
  expect(res.body.meta).toEqual({
    site_id: t.siteId, range: { from: '2026-02-01T00:00:00+00:00', to: '2026-03-01T00:00:00+00:00', tz: 'UTC', clamped: false },
  });
  expect(res.body.data).toMatchObject({ funnel_id: id, window_seconds: 86400 });
  // Visitors 1,2,3,4,5,8 view pricing; 1 and 2 sign up within a day; only 1 pays (2's payment failed).
  expect(res.body.data.steps).toEqual([
    { step: 1, kind: 'view', match: 'equals', value: '/pricing', visitors: 6, conversion_from_first: 100, conversion_from_previous: 100 },
    { step: 2, kind: 'goal', match: 'equals', value: 'Signup', visitors: 2, conversion_from_first: 33.33, conversion_from_previous: 33.33 },
    { step: 3, kind: 'payment', visitors: 1, conversion_from_first: 16.67, conversion_from_previous: 50 },
  ]);
});

test('editing the window changes past figures', async () => {
  const id = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }]);
  expect(visitors(await report(id))).toEqual([6, 2]);
  const edit = await svc.api('PATCH', `/sites/${t.siteId}/funnels/${id}`, { token: t.token, body: { window_seconds: 604800 } });
  expect(edit.status).toBe(200);
  expect(visitors(await report(id))).toEqual([6, 3]);
  await svc.api('PATCH', `/sites/${t.siteId}/funnels/${id}`, { token: t.token, body: { steps: [{ kind: 'view', value: '/about' }, { kind: 'goal', value: 'Signup' }] } });
  expect(visitors(await report(id))).toEqual([1, 0]);
});

test('bots are excluded unless bots=included', async () => {
  const id = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }]);
  expect(visitors(await report(id, `${WINDOW}&bots=included`))).toEqual([7, 3]);
});

test('a goal step also matches defined goals by name: page rules by path, event goals by event name', async () => {
  const docs = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Docs visit' }]);
  expect(visitors(await report(docs))).toEqual([6, 1]);
  const checkout = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', match: 'starts_with', value: 'Checkout' }]);
  expect(visitors(await report(checkout))).toEqual([6, 1]);
});

test.each([
  ['starts_with', '/pri', 6],
  ['ends_with', 'cing', 6],
  ['contains', 'ici', 6],
  ['glob', '/docs/*', 0],
  ['glob', '/docs/**', 1],
  ['equals', '/Pricing', 0],
])('match %s %s on the first step reaches %d visitors', async (match, value, n) => {
  const id = await create([{ kind: 'view', match, value }, { kind: 'view', value: '/nowhere' }]);
  expect(visitors(await report(id))[0]).toBe(n);
});

test('one event never counts for two steps: a repeated or overlapping step needs another event', async () => {
  // Every pricing visitor viewed /pricing exactly once: nobody reaches the second /pricing view.
  const twice = await create([{ kind: 'view', value: '/pricing' }, { kind: 'view', value: '/pricing' }]);
  expect(visitors(await report(twice))).toEqual([6, 0]);
  // v6's single /about view matches both steps, but it is one view: v6 does not reach step 2.
  const overlap = await create([{ kind: 'view', match: 'starts_with', value: '/' }, { kind: 'view', value: '/about' }]);
  expect(visitors(await report(overlap))).toEqual([11, 0]);
  // Distinct events in the same millisecond still follow each other.
  const same = await create([{ kind: 'view', value: '/same' }, { kind: 'goal', value: 'SameMs' }]);
  expect(visitors(await report(same))).toEqual([1, 1]);
  // Same millisecond, overlapping steps: distinct events follow each other whichever matched more steps.
  const tied = await create([{ kind: 'view', match: 'starts_with', value: '/tied' }, { kind: 'view', value: '/tied/b' }]);
  expect(visitors(await report(tied, '?from=2026-03-02T00:00:00Z&to=2026-03-03T00:00:00Z'))).toEqual([4, 3]);
  // A step names the event as it was sent: "Spaced " is not trimmed into a name nothing was sent as.
  const spaced = await create([{ kind: 'view', value: '/spaced' }, { kind: 'goal', value: 'Spaced ' }]);
  expect(visitors(await report(spaced, '?from=2026-03-02T00:00:00Z&to=2026-03-03T00:00:00Z'))).toEqual([1, 1]);
  // The window includes its last millisecond: an hour later still counts, a millisecond more does not.
  const edge = await create([{ kind: 'view', value: '/edge' }, { kind: 'goal', value: 'Edge' }], 3600);
  expect(visitors(await report(edge))).toEqual([3, 1]);
});

test('the window parameters are validated and events outside the window do not count', async () => {
  const id = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }]);
  expect((await report(id, '?period=today&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z')).status).toBe(400);
  const january = await report(id, '?from=2026-01-01T00:00:00Z&to=2026-01-31T00:00:00Z');
  expect(visitors(january)).toEqual([1, 1]);
  const empty = await report(id, '?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z');
  expect(empty.body.data.steps.map((s: { visitors: number; conversion_from_first: number }) => [s.visitors, s.conversion_from_first])).toEqual([[0, 0], [0, 0]]);
});

test('payments no checkout id attributes reach no payment step (they have no visitor, not one phantom visitor)', async () => {
  const unattributed = (id: string) => ({ ...payment(id, 'x', 'succeeded', 90), visitor_id: '0' });
  await svc.running.ctx.store.insert('payments', [unattributed('pi_anon_1'), unattributed('pi_anon_2')]);
  const id = await create([{ kind: 'payment' }, { kind: 'view', value: '/never' }]);
  expect(visitors(await report(id))).toEqual([1, 0]);
});
