import fc from 'fast-check';
import { startTestService, type Tenant, type TestService } from '../support/harness';

let svc: TestService;
let t: Tenant;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['funnels:write', 'analytics:read'] });
});
afterAll(() => svc.stop());

const base = () => `/sites/${t.siteId}/funnels`;
const signup = {
  name: 'Signup',
  steps: [
    { kind: 'view', match: 'equals', value: '/pricing' },
    { kind: 'goal', value: 'Signup' },
    { kind: 'payment' },
  ],
  window_seconds: 604800,
};

test('create answers 201 with the funnel; match defaults to equals; a payment step has neither match nor value', async () => {
  const res = await svc.api('POST', base(), { token: t.token, body: signup });
  expect(res.status).toBe(201);
  expect(res.body.meta).toEqual({ site_id: t.siteId });
  expect(res.body.data).toMatchObject({
    name: 'Signup', window_seconds: 604800,
    steps: [{ kind: 'view', match: 'equals', value: '/pricing' }, { kind: 'goal', match: 'equals', value: 'Signup' }, { kind: 'payment' }],
  });
  expect(res.body.data.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.body.data.created_at).toBe(res.body.data.updated_at);
  expect(Object.keys(res.body.data).sort()).toEqual(['created_at', 'id', 'name', 'steps', 'updated_at', 'window_seconds']);
});

test.each(['equals', 'starts_with', 'ends_with', 'contains', 'glob'])('match %s is accepted', async (match) => {
  const res = await svc.api('POST', base(), {
    token: t.token, body: { name: match, steps: [{ kind: 'view', match, value: '/a' }, { kind: 'view', value: '/b' }] },
  });
  expect(res.status).toBe(201);
  expect(res.body.data.steps[0].match).toBe(match);
  expect(res.body.data.window_seconds).toBe(86400);
});

test.each([
  [{ ...signup, window_seconds: 7200 }, 'window_seconds'],
  [{ ...signup, window_seconds: '3600' }, 'window_seconds'],
  [{ ...signup, steps: [{ kind: 'click', value: 'x' }, { kind: 'payment' }] }, 'steps.0.kind'],
  [{ ...signup, steps: [{ kind: 'view', match: 'regex', value: 'x' }, { kind: 'payment' }] }, 'steps.0.match'],
  [{ ...signup, steps: [{ kind: 'view' }, { kind: 'payment' }] }, 'steps.0.value'],
  [{ ...signup, steps: [{ kind: 'view', value: '/a' }] }, 'steps'],
  [{ ...signup, steps: [{ kind: 'payment', value: 'x' }, { kind: 'payment' }] }, 'steps.0.value'],
  [{ ...signup, site_id: '00000000-0000-4000-8000-000000000000' }, 'site_id'],
  [{ steps: signup.steps }, 'name'],
])('refuses %j with 400 naming %s', async (body, field) => {
  const res = await svc.api('POST', base(), { token: t.token, body });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.message).toContain(field.split('.').pop());
});

// The reason is the rule that was broken, and the place is where it was broken.
test.each([
  [{ ...signup, name: 'n'.repeat(201) }, 'name: allows at most 200 characters'],
  [{ ...signup, name: 5 }, 'name: must be a string'],
  [{ steps: signup.steps }, 'name: is required: a string'],
  [{ ...signup, steps: [{ kind: 'view', value: 5 }, { kind: 'payment' }] }, 'steps.0.value: must be a string: the page path (or pattern) to match'],
  [{ ...signup, steps: [{ kind: 'view', value: `/${'y'.repeat(500)}` }, { kind: 'payment' }] }, 'steps.0.value: allows at most 500 characters'],
  [{ ...signup, steps: [{ kind: 'goal' }, { kind: 'payment' }] }, 'steps.0.value: is required: the goal or event name to match'],
  [{ ...signup, steps: [{ kind: 'view', value: '/a', extra: 1 }, { kind: 'payment' }] }, 'steps.0: unexpected field(s) "extra"'],
  // Sent goals are custom events: a step equal to a built-in event name could never match.
  [{ ...signup, steps: [{ kind: 'goal', value: 'pageview' }, { kind: 'payment' }] }, 'steps.0.value: must name a goal or custom event; page views are view steps, and exit_link and file_download are reported per link'],
  [{ ...signup, steps: [{ kind: 'goal', value: '   ' }, { kind: 'payment' }] }, 'steps.0.value: must not be blank'],
  // In the service's words, not zod's ("Invalid input: expected null, received string", "Invalid option: ...").
  [{ ...signup, steps: [{ kind: 'payment', value: 'x' }, { kind: 'payment' }] }, 'steps.0.value: a payment step takes no value'],
  [{ ...signup, steps: [{ kind: 'view', match: 'regex', value: 'x' }, { kind: 'payment' }] }, 'steps.0.match: must be one of equals, starts_with, ends_with, contains, glob'],
  [{ ...signup, steps: [3, { kind: 'payment' }] }, 'steps.0: must be a JSON object'],
])('%j is refused as %s', async (body, message) => {
  expect((await svc.api('POST', base(), { token: t.token, body })).body.error.message).toBe(message);
});

/**
 * Steps name what was collected: an event name is kept exactly as sent (ingest keeps "Sign up "), and a
 * path anchored at its start is given its leading `/` as goals' and settings' paths are.
 */
test('step values: event names verbatim, anchored paths given their leading slash', async () => {
  const res = await svc.api('POST', base(), {
    token: t.token,
    body: { name: 'values', steps: [
      { kind: 'view', value: 'pricing' }, { kind: 'view', match: 'glob', value: 'docs/**' }, { kind: 'view', match: 'contains', value: 'pricing' },
      { kind: 'goal', value: 'Sign up ' }, { kind: 'goal', match: 'contains', value: 'pageview' },
    ] },
  });
  expect(res.status).toBe(201);
  expect(res.body.data.steps.map((s: { value: string }) => s.value)).toEqual(['/pricing', '/docs/**', 'pricing', 'Sign up ', 'pageview']);
});

test('a glob step that starts with * is kept as given, so **/pricing still reaches /pricing', async () => {
  const res = await svc.api('POST', base(), {
    token: t.token,
    body: { name: 'any depth', steps: [{ kind: 'view', match: 'glob', value: '**/pricing' }, { kind: 'view', match: 'glob', value: '*/docs' }] },
  });
  expect([res.status, res.body.data.steps.map((s: { value: string }) => s.value)]).toEqual([201, ['**/pricing', '*/docs']]);
  await svc.api('DELETE', `${base()}/${res.body.data.id}`, { token: t.token });
});

test('list is paged with a measured has_more; get, edit and delete work; funnels:read cannot write', async () => {
  const s = await svc.tenant({ scopes: ['funnels:write', 'analytics:read'] });
  const path = `/sites/${s.siteId}/funnels`;
  const ids: string[] = [];
  for (const n of ['one', 'two', 'three']) ids.push((await svc.api('POST', path, { token: s.token, body: { ...signup, name: n } })).body.data.id);
  const page = await svc.api('GET', `${path}?limit=2`, { token: s.token });
  expect(page.body.data.map((f: { name: string }) => f.name)).toEqual(['one', 'two']);
  expect(page.body.meta).toEqual({ site_id: s.siteId, page: { limit: 2, offset: 0, has_more: true } });

  const edited = await svc.api('PATCH', `${path}/${ids[0]}`, { token: s.token, body: { window_seconds: 3600, name: 'uno' } });
  expect(edited.status).toBe(200);
  expect(edited.body.data).toMatchObject({ id: ids[0], name: 'uno', window_seconds: 3600, steps: [{ kind: 'view', match: 'equals', value: '/pricing' }, { kind: 'goal', match: 'equals', value: 'Signup' }, { kind: 'payment' }] });
  expect((await svc.api('GET', `${path}/${ids[0]}`, { token: s.token })).body.data.name).toBe('uno');
  expect((await svc.api('PATCH', `${path}/${ids[0]}`, { token: s.token, body: {} })).status).toBe(400);
  expect((await svc.api('PATCH', `${path}/${ids[0]}`, { token: s.token, body: { window_seconds: 60 } })).status).toBe(400);

  const reader = await s.key({ scopes: ['funnels:read'] });
  expect((await svc.api('GET', path, { token: reader.token })).status).toBe(200);
  expect((await svc.api('POST', path, { token: reader.token, body: signup })).status).toBe(403);
  expect((await svc.api('DELETE', `${path}/${ids[1]}`, { token: reader.token })).status).toBe(403);
  const analyst = await s.key({ scopes: ['analytics:read'] });
  expect((await svc.api('GET', path, { token: analyst.token })).status).toBe(403);
  // The report's figures need analytics:read as every report does, and the funnel it reports on funnels:read.
  expect((await svc.api('GET', `${path}/${ids[0]}/report`, { token: reader.token })).status).toBe(403);
  expect((await svc.api('GET', `${path}/${ids[0]}/report`, { token: analyst.token })).status).toBe(403);
  const both = await s.key({ scopes: ['funnels:read', 'analytics:read'] });
  expect((await svc.api('GET', `${path}/${ids[0]}/report`, { token: both.token })).status).toBe(200);

  const del = await svc.api('DELETE', `${path}/${ids[1]}`, { token: s.token });
  expect(del.body.data).toEqual({ id: ids[1], deleted: true });
  expect((await svc.api('GET', `${path}/${ids[1]}`, { token: s.token })).status).toBe(404);
  expect((await svc.api('GET', `${path}/${ids[1]}/report`, { token: s.token })).status).toBe(404);
  expect((await svc.api('GET', path, { token: s.token })).body.data.map((f: { name: string }) => f.name)).toEqual(['uno', 'three']);
});

test('a funnel is reached only through its own site', async () => {
  const two = await svc.tenant({ scopes: ['funnels:write'], sites: 2 });
  const created = await svc.api('POST', `/sites/${two.siteIds[0]}/funnels`, { token: two.token, body: signup });
  expect((await svc.api('GET', `/sites/${two.siteIds[1]}/funnels/${created.body.data.id}`, { token: two.token })).status).toBe(404);
  const stranger = await svc.tenant({ scopes: ['funnels:write'] });
  expect((await svc.api('GET', `/sites/${two.siteIds[0]}/funnels/${created.body.data.id}`, { token: stranger.token })).status).toBe(403);
});

test('the report reads a tz in any letter case as ClickHouse spells it', async () => {
  const id = (await svc.api('POST', base(), { token: t.token, body: signup })).body.data.id;
  const res = await svc.api('GET', `${base()}/${id}/report?period=last7d&tz=america/new_york`, { token: t.token });
  expect(res.status).toBe(200);
  expect(res.body.meta.range.tz).toBe('America/New_York');
});

test('a repeated report parameter is refused in the analytics reports\' words, not as a wrong value', async () => {
  const id = (await svc.api('POST', base(), { token: t.token, body: signup })).body.data.id;
  for (const [qs, name] of [['bots=included&bots=included', 'bots'], ['tz=UTC&tz=UTC', 'tz'], ['period=today&period=yesterday', 'period']]) {
    const res = await svc.api('GET', `${base()}/${id}/report?${qs}`, { token: t.token });
    expect([res.status, res.body.error.message]).toEqual([400, `${name}: give this parameter once, as a single value`]);
  }
  // The notes list takes the same window parameters, refused alike.
  const reader = await t.key({ scopes: ['notes:read'] });
  const notes = await svc.api('GET', `/sites/${t.siteId}/notes?tz=UTC&tz=UTC`, { token: reader.token });
  expect([notes.status, notes.body.error.message]).toEqual([400, 'tz: give this parameter once, as a single value']);
});

test('period=all on a site without data starts at today\'s midnight, as the analytics reports\' does', async () => {
  const empty = await svc.tenant({ scopes: ['funnels:write', 'analytics:read'] });
  const id = (await svc.api('POST', `/sites/${empty.siteId}/funnels`, { token: empty.token, body: signup })).body.data.id;
  const res = await svc.api('GET', `/sites/${empty.siteId}/funnels/${id}/report?period=all&tz=Asia/Tokyo`, { token: empty.token });
  expect(res.status).toBe(200);
  const midnight = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tokyo' }).format(new Date());
  expect(res.body.meta.range.from).toBe(`${midnight}T00:00:00+09:00`);
});

test('no body or report query gives a 5xx', async () => {
  const id = (await svc.api('POST', base(), { token: t.token, body: signup })).body.data.id;
  const step = fc.record({ kind: fc.oneof(fc.constantFrom('view', 'goal', 'payment'), fc.string()), match: fc.oneof(fc.constantFrom('equals', 'glob'), fc.string(), fc.constant(null)), value: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) }, { requiredKeys: [] });
  const body = fc.oneof(fc.jsonValue(), fc.record({ name: fc.oneof(fc.string(), fc.integer()), steps: fc.oneof(fc.array(step, { maxLength: 12 }), fc.string()), window_seconds: fc.oneof(fc.constantFrom(3600, 86400), fc.integer(), fc.string()) }, { requiredKeys: [] }));
  const query = fc.dictionary(fc.constantFrom('period', 'from', 'to', 'tz', 'bots'), fc.oneof(fc.string(), fc.constantFrom('all', 'today', '2026-01-01T00:00:00Z')), { maxKeys: 4 });
  await fc.assert(fc.asyncProperty(body, query, async (b, q) => {
    expect((await svc.api('POST', base(), { token: t.token, body: b })).status).toBeLessThan(500);
    expect((await svc.api('PATCH', `${base()}/${id}`, { token: t.token, body: b })).status).toBeLessThan(500);
    expect((await svc.api('GET', `${base()}/${id}/report?${new URLSearchParams(q)}`, { token: t.token })).status).toBeLessThan(500);
  }), { numRuns: 30 });
});

test('concurrent PATCHes of different fields of one funnel both land', async () => {
  const created = (await svc.api('POST', base(), { token: t.token, body: signup })).body.data;
  const url = `${base()}/${created.id}`;
  const steps = [{ kind: 'view', value: '/' }, { kind: 'goal', value: 'Signup' }];
  const answers = await Promise.all([
    svc.api('PATCH', url, { token: t.token, body: { name: 'Renamed' } }),
    svc.api('PATCH', url, { token: t.token, body: { window_seconds: 3600 } }),
    svc.api('PATCH', url, { token: t.token, body: { steps } }),
  ]);
  expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
  expect((await svc.api('GET', url, { token: t.token })).body.data).toMatchObject({ name: 'Renamed', window_seconds: 3600, steps: [{ value: '/' }, { value: 'Signup' }] });
});

test('a PATCH racing a DELETE never writes the deleted funnel back', async () => {
  for (let i = 0; i < 3; i++) {
    const created = (await svc.api('POST', base(), { token: t.token, body: signup })).body.data;
    const url = `${base()}/${created.id}`;
    const [edit, del] = await Promise.all([
      svc.api('PATCH', url, { token: t.token, body: { name: 'Late edit' } }),
      svc.api('DELETE', url, { token: t.token }),
    ]);
    expect(del.status).toBe(200);
    expect([200, 404]).toContain(edit.status);
    expect((await svc.api('GET', url, { token: t.token })).status).toBe(404);
  }
});
