import fc from 'fast-check';
import { setClock } from '../../core/clock';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';
import { waitFor } from '../support/wait';

let svc: TestService;
let t: Tenant;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});
afterEach(() => setClock(null));

const put = (body: unknown, s: Tenant = t, token = s.token) => svc.api('PUT', `/sites/${s.siteId}/share`, { token, body });
const get = (s: Tenant = t, token = s.token) => svc.api('GET', `/sites/${s.siteId}/share`, { token });
const page = (slug: string, suffix = '') => request('GET', `${svc.base}/share/${slug}${suffix}`);

test('the first PUT creates the board: revenue off, every other section on, no expiry', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  expect((await get(s)).status).toBe(404);
  const res = await put({}, s);
  expect(res.status).toBe(200);
  expect(res.body.meta).toEqual({ site_id: s.siteId });
  const b = res.body.data;
  // Exactly the spec's Share board fields (expires_in_days is a body field, not one of them).
  expect(Object.keys(b).sort()).toEqual([
    'active', 'created_at', 'days_left', 'expires_at', 'label', 'max_range_days', 'panels', 'slug', 'updated_at', 'url', 'view_count',
  ]);
  expect(b.url).toBe(`/share/${b.slug}`);
  expect(b.slug).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(b).toMatchObject({ active: true, label: s.domain, max_range_days: 90, days_left: null, expires_at: null, view_count: 0 });
  expect(b.panels.revenue).toBe(false);
  expect(Object.keys(b.panels).sort()).toEqual([
    'ai_panel', 'channel_quality', 'funnel', 'geo', 'goals', 'heatmap', 'imported_history', 'keywords', 'pages', 'revenue', 'sources', 'tech',
  ]);
  expect(Object.entries(b.panels).filter(([k]) => k !== 'revenue').every(([, v]) => v === true)).toBe(true);
  expect((await get(s)).body.data).toEqual(b);
});

test('later PUTs keep the slug and omitted settings, and switch sections', async () => {
  const first = await put({ label: 'Our numbers', revenue: true, geo: false, max_range_days: 30 });
  const second = await put({ geo: true });
  expect(second.body.data).toMatchObject({ slug: first.body.data.slug, label: 'Our numbers', max_range_days: 30 });
  expect(second.body.data.panels).toMatchObject({ revenue: true, geo: true });
});

test('expires_in_days sets expires_at and days_left, and the clock restarts on every save', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  setClock('2026-03-01T12:00:00Z');
  const first = await put({ expires_in_days: 7 }, s);
  expect(first.body.data).toMatchObject({ expires_at: '2026-03-08T12:00:00.000Z', days_left: 7 });
  setClock('2026-03-05T12:00:00Z');
  expect((await get(s)).body.data.days_left).toBe(3);
  // A save that does not repeat expires_in_days still restarts the clock from now.
  const again = await put({ label: 'Renamed' }, s);
  expect(again.body.data).toMatchObject({ expires_at: '2026-03-12T12:00:00.000Z', days_left: 7 });
  const never = await put({ expires_in_days: null }, s);
  expect(never.body.data).toMatchObject({ expires_at: null, days_left: null });
});

test.each([
  [{ revenue: 'yes' }, 'revenue'],
  [{ colour: true }, 'colour'],
  [{ max_range_days: 0 }, 'max_range_days: must be between 1 and 3650 days'],
  [{ max_range_days: 3651 }, 'max_range_days: must be between 1 and 3650 days'],
  [{ max_range_days: 1.5 }, 'max_range_days: must be a whole number of days'],
  [{ max_range_days: '30' }, 'max_range_days: must be a whole number of days'],
  [{ expires_in_days: -1 }, 'expires_in_days: must be between 1 and 3650 days'],
  [{ expires_in_days: 'soon' }, 'expires_in_days: must be a whole number of days or null'],
  [{ label: '' }, 'label'],
  [{ site_id: '00000000-0000-4000-8000-000000000000' }, 'site_id'],
])('refuses %j naming %s', async (body, field) => {
  const res = await put(body);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.message).toContain(field);
});

test('settings:read reads but cannot write; other scopes cannot read', async () => {
  await put({});
  const reader = await t.key({ scopes: ['settings:read', 'analytics:read'] });
  expect((await get(t, reader.token)).status).toBe(200);
  // Its url opens the board's figures: settings:read alone does not get it.
  expect((await get(t, (await t.key({ scopes: ['settings:read'] })).token)).status).toBe(403);
  expect((await put({}, t, reader.token)).status).toBe(403);
  expect((await svc.api('DELETE', `/sites/${t.siteId}/share`, { token: reader.token })).status).toBe(403);
  const analyst = await t.key({ scopes: ['analytics:read', 'notes:write'] });
  expect((await get(t, analyst.token)).status).toBe(403);
  // Publishing shows the site's analytics to anyone with the link: settings:write alone may not.
  const editor = await t.key({ scopes: ['settings:write'] });
  const before = (await get(t)).body.data;
  expect((await put({ label: 'published by an editor' }, t, editor.token)).status).toBe(403);
  expect((await get(t)).body.data).toEqual(before);
});

test('DELETE deactivates: the link answers 404; a later PUT issues a new slug and starts counting afresh', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const board = (await put({}, s)).body.data;
  expect((await page(board.slug)).status).toBe(200);
  expect((await get(s)).body.data.view_count).toBe(1);
  const del = await svc.api('DELETE', `/sites/${s.siteId}/share`, { token: s.token });
  expect(del.status).toBe(200);
  expect(del.body.data).toMatchObject({ slug: board.slug, active: false });
  expect((await get(s)).body.data.active).toBe(false);
  expect((await page(board.slug)).status).toBe(404);
  expect((await page(board.slug, '/data')).status).toBe(404);
  const again = (await put({}, s)).body.data;
  expect(again.slug).not.toBe(board.slug);
  expect(again).toMatchObject({ active: true, view_count: 0 });
  expect((await page(board.slug)).status).toBe(404);
  expect((await page(again.slug)).status).toBe(200);
});

test('a board re-created after DELETE keeps its layout but starts with revenue off, unless the PUT asks', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  expect((await put({ revenue: true, heatmap: false, label: 'Board' }, s)).body.data.panels).toMatchObject({ revenue: true, heatmap: false });
  await svc.api('DELETE', `/sites/${s.siteId}/share`, { token: s.token });
  const again = (await put({ label: 'again' }, s)).body.data;
  expect(again.panels).toMatchObject({ revenue: false, heatmap: false });
  await svc.api('DELETE', `/sites/${s.siteId}/share`, { token: s.token });
  expect((await put({ revenue: true }, s)).body.data.panels.revenue).toBe(true);
  // A live board keeps its switches between saves.
  expect((await put({ label: 'kept' }, s)).body.data.panels.revenue).toBe(true);
});

test('an expired board answers 404 on the page and its data; the API still shows it with days_left 0', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  setClock('2026-03-01T12:00:00Z');
  const board = (await put({ expires_in_days: 1 }, s)).body.data;
  expect((await page(board.slug)).status).toBe(200);
  setClock('2026-03-02T12:00:01Z');
  expect((await page(board.slug)).status).toBe(404);
  expect((await page(board.slug, '/data')).status).toBe(404);
  expect((await get(s)).body.data).toMatchObject({ active: true, days_left: 0 });
});

test('view_count counts page views of the board, not data fetches', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const board = (await put({}, s)).body.data;
  for (let i = 0; i < 3; i++) expect((await page(board.slug)).status).toBe(200);
  const data = await page(board.slug, '/data');
  expect(data.status).toBe(200);
  expect(data.headers['access-control-allow-origin']).toBe('*'); // readable from a sandboxed (opaque-origin) frame
  expect((await request('HEAD', `${svc.base}/share/${board.slug}`)).status).toBe(200); // loads nothing: not a view
  expect((await get(s)).body.data.view_count).toBe(3);
  // After the counter has flushed to ClickHouse (a timer of a second; waited for, not slept on: a fixed
  // 1.5 s could pass on a loaded machine with the views still pending, proving nothing).
  const store = svc.running.ctx.store;
  const stored = async () => Number((await store.query<{ v: number }>(
    `SELECT toUInt64(sum(views)) AS v FROM ${store.table('public_views')} WHERE kind = 'share' AND slug = {slug:String}`, { slug: board.slug }))[0]?.v ?? 0);
  await waitFor('the views to reach ClickHouse', async () => (await stored()) >= 3);
  expect(await stored()).toBe(3);
  expect((await get(s)).body.data.view_count).toBe(3);
});

test('API keys and share links never stand in for each other', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const board = (await put({}, s)).body.data;
  // A share slug is no bearer token...
  const api = await svc.api('GET', `/sites/${s.siteId}/share`, { token: board.slug });
  expect(api.status).toBe(401);
  expect(api.body.error.code).toBe('invalid_credential');
  // ...and an API key opens no board, even sent as a bearer to a public page.
  expect((await page(s.token)).status).toBe(404);
  expect((await page(s.token, '/data')).status).toBe(404);
  const withKey = await request('GET', `${svc.base}/share/not-a-board/data`, { token: s.token });
  expect(withKey.status).toBe(404);
});

test('viewers are held to max_range_days', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const board = (await put({ max_range_days: 7 }, s)).body.data;
  setClock('2026-03-10T12:00:00Z');
  expect((await page(board.slug, '/data?period=last7d')).status).toBe(200);
  const month = await page(board.slug, '/data?period=last30d');
  expect(month.status).toBe(400);
  expect(month.body.error.code).toBe('invalid_request');
  expect(month.body.error.message).toContain('max_range_days');
  const old = await page(board.slug, '/data?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z');
  expect(old.status).toBe(400);
  expect((await page(board.slug, '/data?period=today&from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z')).status).toBe(400);
  // Without a window the board shows the longest default it allows.
  const dflt = await page(board.slug, '/data');
  expect(dflt.status).toBe(200);
  expect(dflt.body.data.range.from).toBe('2026-03-04T00:00:00+00:00');
});

test('max_range_days holds whatever the org retention; retention then clamps; nothing after this year', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const board = (await put({ max_range_days: 90 }, s)).body.data;
  const org = (await svc.running.ctx.repos.getOrg(s.orgId))!;
  await svc.running.ctx.repos.orgs.put({ ...org, retention_days: 30 });
  setClock('2026-11-10T12:00:00Z');
  // Beyond max_range_days: refused, although retention (30 days) would have narrowed it quietly.
  for (const qs of ['period=last12m', 'period=year', 'from=2026-07-01T00:00:00Z&to=2026-11-01T00:00:00Z']) {
    const res = await page(board.slug, `/data?${qs}`);
    expect([qs, res.status, res.body.error?.details]).toEqual([qs, 400, { max_range_days: 90 }]);
  }
  // Within max_range_days but wholly before retention: empty and clamped, as the API answers it.
  const old = await page(board.slug, '/data?from=2026-09-01T00:00:00Z&to=2026-10-01T00:00:00Z');
  expect(old.status).toBe(200);
  expect(old.body.data.range).toMatchObject({ clamped: true });
  expect(old.body.data.summary.visitors).toBe(0);
  // The latest end a board's own periods have is the end of this year.
  expect((await page(board.slug, '/data?from=2026-11-01T00:00:00Z&to=2027-01-01T00:00:00Z')).status).toBe(200);
  const future = await page(board.slug, '/data?from=2026-11-01T00:00:00Z&to=2199-12-31T00:00:00Z');
  expect([future.status, future.body.error.message]).toEqual([400, 'to: this board shows nothing after the end of this year (2027-01-01T00:00:00+00:00)']);
  // A feed's hand-checked refusal lists its issue as the API's do (the body is built in one place).
  expect(future.body.error.details).toEqual({ issues: [{ path: 'to', message: 'this board shows nothing after the end of this year (2027-01-01T00:00:00+00:00)' }] });
});

test('viewers within one memo period share a rolling window, so a crowd on "Last 24 hours" costs one computation', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const board = (await put({}, s)).body.data;
  setClock('2026-11-10T12:00:01.250Z');
  const first = await page(board.slug, '/data?period=last24h');
  setClock('2026-11-10T12:00:13.900Z');
  const second = await page(board.slug, '/data?period=last24h');
  expect(first.body.data.range).toMatchObject({ from: '2026-11-09T12:00:00+00:00', to: '2026-11-10T12:00:00+00:00' });
  expect(second.body).toEqual(first.body);
  setClock('2026-11-10T12:00:15.000Z');
  expect((await page(board.slug, '/data?period=last24h')).body.data.range.to).toBe('2026-11-10T12:00:15+00:00');
});

test('no body or viewer query gives a 5xx', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const slug = (await put({}, s)).body.data.slug;
  const any = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.double());
  const body = fc.oneof(fc.jsonValue(), fc.record({ revenue: any, geo: any, label: any, max_range_days: any, expires_in_days: any }, { requiredKeys: [] }));
  const query = fc.dictionary(fc.constantFrom('period', 'from', 'to', 'tz', 'bots'), fc.oneof(fc.string(), fc.constantFrom('all', 'today', '2026-01-01T00:00:00Z')), { maxKeys: 4 });
  await fc.assert(fc.asyncProperty(body, query, fc.string(), async (b, q, junk) => {
    expect((await put(b, s)).status).toBeLessThan(500);
    expect((await page(slug, `/data?${new URLSearchParams(q)}`)).status).toBeLessThan(500);
    expect((await page(encodeURIComponent(junk))).status).toBeLessThan(500);
  }), { numRuns: 30 });
});

test('racing first PUTs make one board: every answer carries the one slug that works', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => put({ label: `L${i}` }, s)));
  const slugs = new Set(answers.map((r) => r.body.data.slug));
  expect(slugs.size).toBe(1);
  expect((await page([...slugs][0])).status).toBe(200);
  expect((await get(s)).body.data.slug).toBe([...slugs][0]);
});
