import { FIXTURE } from './reports-fixture';
import { reportSuite, type ReportSuite } from './reports-support';

/** Goals API and read-time goal semantics: page rules change past windows, revenue-signal nomination. */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z', domain: 'shop.example', scopes: ['analytics:read', 'goals:write'] });
  await s.importLines([
    ...FIXTURE,
    { ts: '2026-05-19T15:01:00Z', visitor: 'B', path: '/', name: 'Newsletter', value_cents: 300 },
  ]);
});
afterAll(() => s.stop());

const post = (body: object, token = s.t.token) => s.svc.api('POST', '/goals', { token, body });
const overview = async () => (await s.ok('/overview', { period: 'last7d' })).data;

test('no goals defined: every custom event is a goal', async () => {
  expect(await overview()).toMatchObject({ goals: 2, goal_value_cents: 1800, conversion_rate: 66.67 });
  expect((await s.ok('/breakdowns/goal', { period: 'last7d' })).data).toEqual([
    { label: 'Newsletter', visitors: 1, goals: 1 },
    { label: 'Signup', visitors: 1, goals: 1 },
  ]);
});

test('a page rule goal is evaluated at read time: adding it changes past windows', async () => {
  const res = await post({ site_id: s.t.siteId, name: 'Docs', kind: 'page', path_pattern: 'docs/**' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ name: 'Docs', kind: 'page', path_pattern: '/docs/**', event_name: null, revenue_signal: false });
  expect(res.body.meta).toEqual({ site_id: s.t.siteId });
  // C's two /docs pageviews now complete the goal.
  expect(await overview()).toMatchObject({ goals: 4, conversion_rate: 100 });
  expect((await s.ok('/breakdowns/goal', { period: 'last7d' })).data).toEqual([
    { label: 'Docs', visitors: 1, goals: 2 },
    { label: 'Newsletter', visitors: 1, goals: 1 },
    { label: 'Signup', visitors: 1, goals: 1 },
  ]);
  expect((await s.ok('/overview', { period: 'last7d', filter_goal: 'Docs' })).data).toMatchObject({ visitors: 1, views: 2, goals: 2 });
});

test('nominating a revenue signal: only nominated goals count; the goal dimension still lists every goal', async () => {
  const res = await post({ site_id: s.t.siteId, name: 'Sign up', kind: 'event', event_name: 'Signup', revenue_signal: true });
  expect(res.status).toBe(201);
  expect(await overview()).toMatchObject({ goals: 1, goal_value_cents: 1500, conversion_rate: 33.33 });
  const series = (await s.ok('/timeseries', { period: 'last7d' })).data;
  expect(series.reduce((n: number, r: { goals: number }) => n + r.goals, 0)).toBe(1);
  expect((await s.ok('/breakdowns/goal', { period: 'last7d' })).data.map((r: { label: string }) => r.label)).toEqual(['Docs', 'Newsletter', 'Sign up']);
  expect((await s.ok('/breakdowns/channel', { period: 'last7d' })).data.find((r: { label: string }) => r.label === 'Organic Search')).toMatchObject({ goals: 1 });
});

test('a goal filter narrows visitors to that goal, but goals still count the nominated ones only (spec: Timeseries row)', async () => {
  // "Sign up" is nominated (previous test); Newsletter (B) and Docs (C) are not.
  const sum = (rows: { goals: number; goal_value_cents: number }[]) =>
    rows.reduce((t, r) => ({ goals: t.goals + r.goals, goal_value_cents: t.goal_value_cents + r.goal_value_cents }), { goals: 0, goal_value_cents: 0 });
  expect(sum((await s.ok('/timeseries', { period: 'last7d', filter_goal: 'Newsletter' })).data)).toEqual({ goals: 0, goal_value_cents: 0 });
  expect((await s.ok('/overview', { period: 'last7d', filter_goal: 'Newsletter' })).data).toMatchObject({ visitors: 1, goals: 0, goal_value_cents: 0 });
  expect(sum((await s.ok('/timeseries', { period: 'last7d', filter_goal: 'Sign up' })).data)).toEqual({ goals: 1, goal_value_cents: 1500 });
  // A defined goal is named in any case (names are unique regardless of case).
  expect((await s.ok('/overview', { period: 'last7d', filter_goal: 'sign UP' })).data).toMatchObject({ visitors: 1, goals: 1, goal_value_cents: 1500 });
});

test('listing and deleting goals', async () => {
  const list = await s.get('/goals');
  expect(list.status).toBe(200);
  expect(list.body.data.map((g: { name: string }) => g.name)).toEqual(['Docs', 'Sign up']);
  expect(list.body.meta.page).toEqual({ limit: 100, offset: 0, has_more: false });
  const id = list.body.data[1].id;
  const del = await s.svc.api('DELETE', `/sites/${s.t.siteId}/goals/${id}`, { token: s.t.token });
  expect(del.status).toBe(200);
  expect(del.body.data).toEqual({ id, deleted: true });
  expect((await s.svc.api('DELETE', `/sites/${s.t.siteId}/goals/${id}`, { token: s.t.token })).status).toBe(404);
  expect((await s.svc.api('DELETE', `/sites/${s.t.siteId}/goals/not-a-uuid`, { token: s.t.token })).status).toBe(404);
  // No nomination left: every goal counts again.
  expect(await overview()).toMatchObject({ goals: 4 });
});

test.each([
  [{ name: 'x', kind: 'event' }, /^event_name: is required/],
  [{ name: 'x', kind: 'page' }, /^path_pattern: is required/],
  [{ name: 'x', kind: 'event', event_name: 'a', path_pattern: '/a' }, /^path_pattern: only page goals/],
  [{ name: 'x', kind: 'page', path_pattern: '/a', event_name: 'a' }, /^event_name: only event goals/],
  [{ name: 'x', kind: 'event', event_name: 'pageview' }, /^event_name:/],
  [{ name: 'x', kind: 'event', event_name: '   ' }, /^event_name: must not be blank/],
  [{ name: 'x', kind: 'funnel' }, /^kind:/],
  [{ name: '', kind: 'event', event_name: 'a' }, /^name:/],
  // A funnel goal step could not name it: the step refuses the tracker's own event names.
  [{ name: 'pageview', kind: 'page', path_pattern: '/a' }, /^name: must not be pageview, exit_link or file_download/],
  [{ name: ' file_download ', kind: 'event', event_name: 'a' }, /^name: must not be pageview/],
  [{ name: 'x', kind: 'event', event_name: 'a', extra: 1 }, /unexpected field/],
])('POST /goals %j is a 400', async (body, message) => {
  const res = await post({ site_id: s.t.siteId, ...body });
  expect(res.status).toBe(400);
  expect(res.body.error.message).toMatch(message);
});

test('an event goal names the event as it was sent: surrounding spaces are kept (ingest keeps them)', async () => {
  const res = await post({ site_id: s.t.siteId, name: 'Spaced order', kind: 'event', event_name: ' Order ' });
  expect(res.status).toBe(201);
  expect(res.body.data.event_name).toBe(' Order ');
  expect((await s.svc.api('DELETE', `/sites/${s.t.siteId}/goals/${res.body.data.id}`, { token: s.t.token })).status).toBe(200);
});

test('a duplicate name is 409; a foreign site is 403; scopes are enforced', async () => {
  expect((await post({ site_id: s.t.siteId, name: 'docs', kind: 'page', path_pattern: '/d' })).status).toBe(409);
  const other = await s.svc.tenant({ scopes: ['goals:write'] });
  expect((await post({ site_id: other.siteId, name: 'y', kind: 'event', event_name: 'y' })).status).toBe(403);
  const reader = await s.t.key({ scopes: ['analytics:read'] });
  expect((await post({ site_id: s.t.siteId, name: 'z', kind: 'event', event_name: 'z' }, reader.token)).status).toBe(403);
  expect((await s.get('/goals', {}, reader.token)).status).toBe(403);
});

test('concurrent creations of one goal name (any case) give one goal and 409s', async () => {
  const names = ['Race', 'race', 'RACE', 'Race', 'rAce', 'Race'];
  const statuses = (await Promise.all(names.map((name) => post({ site_id: s.t.siteId, name, kind: 'event', event_name: 'race' })))).map((r) => r.status);
  expect(statuses.sort()).toEqual([201, 409, 409, 409, 409, 409]);
  const goals = (await s.get('/goals')).body.data.filter((g: { name: string }) => g.name.toLowerCase() === 'race');
  expect(goals).toHaveLength(1);
});
