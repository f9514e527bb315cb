import { randomUUID } from 'node:crypto';
import { isoToCh } from '../../clickhouse/meta';
import { setClock } from '../../core/clock';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/**
 * The funnel report over real chDB. Rows are written straight into the events and payments tables
 * (the funnel SQL is what is under test here), each visitor a scripted path.
 */
let svc: TestService;
let t: Tenant;
const T0 = Date.parse('2026-02-10T09:00:00Z');
const at = (minutes: number) => isoToCh(new Date(T0 + minutes * 60_000));
const WINDOW = '?from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z';

function event(visitor: number, name: string, pathname: string, minutes: number, isBot = 0) {
  return {
    site_id: t.siteId, ts: at(minutes), name, event_id: randomUUID(), visitor_id: visitor, session_id: visitor * 10,
    session_start: at(minutes), is_bot: isBot, hostname: t.domain, pathname,
  };
}
const view = (v: number, path: string, m: number, bot = 0) => event(v, 'pageview', path, m, bot);
const goal = (v: number, name: string, m: number, bot = 0) => event(v, name, '/', m, bot);

beforeAll(async () => {
  setClock('2026-03-05T12:00:00Z');
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['funnels:write'] });
  const { store } = svc.running.ctx;
  await store.insert('events', [
    view(1, '/pricing', 0), goal(1, 'Signup', 10),
    view(2, '/pricing', 0), goal(2, 'Signup', 30),
    view(3, '/pricing', 0),
    goal(4, 'Signup', 0), view(4, '/pricing', 5), // wrong order: only the first step counts
    view(5, '/pricing', 0), goal(5, 'Signup', 2 * 24 * 60), // second step two days later
    view(6, '/about', 0),
    view(7, '/pricing', 0, 1), goal(7, 'Signup', 5, 1), // a crawler
    view(8, '/pricing', 0), view(8, '/docs/api/keys', 20), // reaches the page-rule goal
    view(9, '/pricing', -60 * 24 * 30), goal(9, 'Signup', -60 * 24 * 30 + 5), // before the window
  ]);
  await store.insert('payments', [
    { site_id: t.siteId, provider: 'stripe', payment_id: 'pi_1', visitor_id: 1, amount_cents: 900, currency: 'USD', status: 'succeeded', paid_at: at(60), version: 1, is_deleted: 0 },
    { site_id: t.siteId, provider: 'stripe', payment_id: 'pi_2', visitor_id: 2, amount_cents: 900, currency: 'USD', status: 'failed', paid_at: at(60), version: 1, is_deleted: 0 },
  ]);
  await store.insert('goals', [
    { id: randomUUID(), site_id: t.siteId, name: 'Docs visit', kind: 'page', event_name: '', path_pattern: '/docs/**', revenue_signal: 0, created_at: at(0), updated_at: at(0), version: 1, is_deleted: 0 },
  ]);
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

test('a goal step also matches rule-based page goals by name', async () => {
  const id = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Docs visit' }]);
  expect(visitors(await report(id))).toEqual([6, 1]);
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

test('the window parameters are validated and events outside the window do not count', async () => {
  const id = await create([{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }]);
  expect((await report(id, '?period=today&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z')).status).toBe(400);
  const january = await report(id, '?from=2026-01-01T00:00:00Z&to=2026-01-31T00:00:00Z');
  expect(visitors(january)).toEqual([1, 1]);
  const empty = await report(id, '?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z');
  expect(empty.body.data.steps.map((s: { visitors: number; conversion_from_first: number }) => [s.visitors, s.conversion_from_first])).toEqual([[0, 0], [0, 0]]);
});
