import fc from 'fast-check';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const put = (s: Tenant, body: unknown, token = s.token) => svc.api('PUT', `/sites/${s.siteId}/widget`, { token, body });
const get = (s: Tenant, token = s.token) => svc.api('GET', `/sites/${s.siteId}/widget`, { token });
const card = (slug: string) => request('GET', `${svc.base}/widget/${slug}`);
const feed = (slug: string) => request('GET', `${svc.base}/widget/${slug}.json`);

/** One recorded event, through the import command. */
async function recordEvent(s: Tenant): Promise<void> {
  const line = JSON.stringify({ ts: new Date().toISOString(), name: 'pageview', url: `https://${s.domain}/`, user_agent: 'Mozilla/5.0 Chrome/130.0' });
  expect(await svc.admin('events import', { site: s.siteId }, line)).toMatchObject({ imported: 1 });
}

test('a new widget starts off with defaults; GET before any PUT is 404', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  expect((await get(s)).status).toBe(404);
  const res = await put(s, {});
  expect(res.status).toBe(200);
  expect(res.body.meta).toEqual({ site_id: s.siteId });
  expect(res.body.data).toMatchObject({
    type: 'analytics', metric: 'visitors', enabled: false, chart_style: 'bar', publish_revenue: false, view_count: 0,
  });
  expect(res.body.data.url).toBe(`/widget/${res.body.data.slug}`);
  expect(Object.keys(res.body.data).sort()).toEqual([
    'chart_style', 'created_at', 'enabled', 'metric', 'publish_revenue', 'slug', 'type', 'updated_at', 'url', 'view_count',
  ]);
  expect((await get(s)).body.data).toEqual(res.body.data);
  expect((await card(res.body.data.slug)).status).toBe(404);
  expect((await feed(res.body.data.slug)).status).toBe(404);
});

test('switching on without any recorded event is 409 no_events and changes nothing', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const res = await put(s, { enabled: true, type: 'realtime' });
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe('no_events');
  expect((await get(s)).status).toBe(404);
  await put(s, { metric: 'views' });
  expect((await put(s, { enabled: true })).status).toBe(409);
  expect((await get(s)).body.data).toMatchObject({ enabled: false, metric: 'views' });
});

test('with one recorded event it switches on: the card and its JSON are public; off again they are 404', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  await recordEvent(s);
  const on = await put(s, { enabled: true, type: 'recent', metric: 'online', chart_style: 'area' });
  expect(on.status).toBe(200);
  expect(on.body.data).toMatchObject({ enabled: true, type: 'recent', metric: 'online', chart_style: 'area', publish_revenue: false });
  const slug = on.body.data.slug;
  const html = await card(slug);
  expect(html.status).toBe(200);
  expect(html.headers['content-type']).toContain('text/html');
  expect(html.headers['x-frame-options']).toBeUndefined();
  expect(html.headers['content-security-policy']).not.toContain('frame-ancestors');
  const json = await feed(slug);
  expect(json.status).toBe(200);
  // A card in a sandboxed iframe has an opaque origin: its fetch of its own feed is cross-origin.
  expect(json.headers['access-control-allow-origin']).toBe('*');
  const off = await put(s, { enabled: false });
  expect(off.body.data).toMatchObject({ enabled: false, slug });
  expect((await card(slug)).status).toBe(404);
  expect((await feed(slug)).status).toBe(404);
});

test('view_count counts card views, not JSON reads', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  await recordEvent(s);
  const slug = (await put(s, { enabled: true })).body.data.slug;
  await card(slug);
  await card(slug);
  await feed(slug);
  // A HEAD (a link checker, an unfurler) loads nothing.
  expect((await request('HEAD', `${svc.base}/widget/${slug}`)).status).toBe(200);
  expect((await get(s)).body.data.view_count).toBe(2);
});

test.each([
  [{ type: 'weekly' }, 'type'],
  [{ metric: 'sessions' }, 'metric'],
  [{ chart_style: 'pie' }, 'chart_style'],
  [{ enabled: 'yes' }, 'enabled'],
  [{ publish_revenue: 1 }, 'publish_revenue'],
  [{ site_id: '00000000-0000-4000-8000-000000000000' }, 'site_id'],
])('refuses %j naming %s', async (body, field) => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const res = await put(s, body);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.message).toContain(field);
});

test('settings:read reads, settings:write writes, others are refused; a key never opens a card', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  await put(s, {});
  const reader = await s.key({ scopes: ['settings:read', 'analytics:read'] });
  expect((await get(s, reader.token)).status).toBe(200);
  expect((await put(s, {}, reader.token)).status).toBe(403);
  const analyst = await s.key({ scopes: ['analytics:read'] });
  expect((await get(s, analyst.token)).status).toBe(403);
  // Its url opens the card's figures: settings:read alone does not get it.
  expect((await get(s, (await s.key({ scopes: ['settings:read'] })).token)).status).toBe(403);
  // Switching a widget on publishes analytics: settings:write alone may not.
  expect((await put(s, { enabled: true }, (await s.key({ scopes: ['settings:write'] })).token)).status).toBe(403);
  expect((await card(s.token)).status).toBe(404);
  expect((await svc.api('GET', `/sites/${s.siteId}/widget`, { token: (await get(s)).body.data.slug })).status).toBe(401);
});

test('no body gives a 5xx', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const any = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
  const body = fc.oneof(fc.jsonValue(), fc.record({ type: any, metric: any, enabled: any, chart_style: any, publish_revenue: any }, { requiredKeys: [] }));
  await fc.assert(fc.asyncProperty(body, fc.string(), async (b, junk) => {
    expect((await put(s, b)).status).toBeLessThan(500);
    expect((await card(encodeURIComponent(junk))).status).toBeLessThan(500);
    expect((await feed(encodeURIComponent(junk))).status).toBeLessThan(500);
  }), { numRuns: 30 });
});

test('racing first PUTs make one widget with one slug, and every field sent lands', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const answers = await Promise.all([put(s, { metric: 'views' }), put(s, { chart_style: 'area' }), put(s, { type: 'analytics' })]);
  expect(new Set(answers.map((r) => r.body.data.slug)).size).toBe(1);
  expect((await get(s)).body.data).toMatchObject({ slug: answers[0].body.data.slug, metric: 'views', chart_style: 'area' });
});

test('DELETE retires a leaked embed: the old slug answers 404 for good, a later PUT makes a new widget that starts off', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  await recordEvent(s);
  const old = (await put(s, { enabled: true, metric: 'views', publish_revenue: true })).body.data;
  await card(old.slug);
  expect((await card(old.slug)).status).toBe(200);
  const reader = await s.key({ scopes: ['settings:read'] });
  expect((await svc.api('DELETE', `/sites/${s.siteId}/widget`, { token: reader.token })).status).toBe(403);

  const del = await svc.api('DELETE', `/sites/${s.siteId}/widget`, { token: s.token });
  expect(del.status).toBe(200);
  expect(del.body).toEqual({ data: { slug: old.slug, deleted: true }, meta: { site_id: s.siteId } });
  expect((await card(old.slug)).status).toBe(404);
  expect((await feed(old.slug)).status).toBe(404);
  expect((await get(s)).status).toBe(404);
  expect((await svc.api('DELETE', `/sites/${s.siteId}/widget`, { token: s.token })).status).toBe(404);

  const fresh = (await put(s, {})).body.data;
  expect(fresh.slug).not.toBe(old.slug);
  expect(fresh).toMatchObject({ enabled: false, metric: 'visitors', publish_revenue: false, view_count: 0 });
  await put(s, { enabled: true });
  expect((await card(fresh.slug)).status).toBe(200);
  expect((await card(old.slug)).status).toBe(404);
});
