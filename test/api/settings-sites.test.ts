import { startTestService, type Tenant, type TestService } from '../support/harness';

/** GET /sites (any key, the sites it reaches) and POST /sites (sites:write). */
let svc: TestService;
let t: Tenant;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ sites: 3, scopes: ['sites:write'] });
});
afterAll(() => svc.stop());

test('GET /sites pages the reached sites; has_more is measured', async () => {
  const all = await svc.api('GET', '/sites', { token: t.token });
  expect(all.body.data.map((s: { id: string }) => s.id)).toEqual(t.siteIds);
  expect(all.body.data[0]).toEqual({
    id: t.siteIds[0], domain: t.domain, name: t.domain, timezone: 'UTC', currency: 'USD', active: true, created_at: expect.any(String),
  });
  const p1 = await svc.api('GET', '/sites?limit=2', { token: t.token });
  expect(p1.body.meta).toEqual({ page: { limit: 2, offset: 0, has_more: true } });
  const p2 = await svc.api('GET', '/sites?limit=2&offset=2', { token: t.token });
  expect(p2.body.data.map((s: { id: string }) => s.id)).toEqual([t.siteIds[2]]);
  expect(p2.body.meta.page.has_more).toBe(false);
  const exact = await svc.api('GET', '/sites?limit=3', { token: t.token });
  expect(exact.body.meta.page.has_more).toBe(false);
});

test.each([
  'limit=0', 'limit=1001', 'limit=abc', 'offset=-1', 'limit=1.5', 'limit=0x2', 'limit=1e0', 'limit=2.0', 'offset=', 'limit=2&limit=3',
])('GET /sites?%s is a 400 naming the parameter, in the reports\' words', async (qs) => {
  const res = await svc.api('GET', `/sites?${qs}`, { token: t.token });
  expect(res.status).toBe(400);
  const name = qs.split('=')[0];
  // A repeated parameter has one refusal on every route (api/route singleValued).
  const words = name === 'limit' ? 'limit: must be an integer from 1 to 1000' : 'offset: must be an integer from 0 to 1000000000';
  expect(res.body.error.message).toBe(qs.includes('&') ? 'limit: give this parameter once, as a single value' : words);
  const reader = await t.key({ scopes: ['analytics:read'] });
  const report = await svc.api('GET', `/sites/${t.siteIds[0]}/breakdowns/path?${qs}`, { token: reader.token });
  expect(report.status).toBe(400);
  expect(report.body.error.message).toBe(qs.includes('&') ? 'limit: give this parameter once, as a single value' : res.body.error.message);
});

test('GET /sites needs no particular scope and lists only the key reach', async () => {
  const plain = await t.key({ scopes: ['analytics:read'], sites: [t.siteIds[1]] });
  const res = await svc.api('GET', '/sites', { token: plain.token });
  expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([t.siteIds[1]]);
});

test('POST /sites creates a site that every all-sites key reaches at once', async () => {
  const res = await svc.api('POST', '/sites', {
    token: t.token, body: { domain: 'New.Example.org', name: 'New', timezone: 'Europe/Paris', currency: 'eur' },
  });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    data: { id: expect.any(String), domain: 'new.example.org', name: 'New', timezone: 'Europe/Paris', currency: 'EUR', active: true, created_at: expect.any(String) },
    meta: { site_id: res.body.data.id },
  });
  const listed = await svc.api('GET', '/sites', { token: t.token });
  expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(res.body.data.id);
  const settings = await t.key({ scopes: ['settings:read'] });
  expect((await svc.api('GET', `/sites/${res.body.data.id}/settings`, { token: settings.token })).body.data.allowed_hostnames).toEqual(['new.example.org']);
});

test('a domain typed in Unicode is kept in its ASCII form, as browsers send it, and names the site as it was written', async () => {
  const res = await svc.api('POST', '/sites', { token: t.token, body: { domain: 'Bücher.example' } });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ domain: 'xn--bcher-kva.example', name: 'bücher.example' });
});

test('POST /sites refuses a taken domain (409), a bad domain, unknown fields and a bad timezone (400)', async () => {
  expect((await svc.api('POST', '/sites', { token: t.token, body: { domain: t.domain } })).status).toBe(409);
  for (const [body, msg] of [
    [{}, /^domain: /],
    [{ domain: 'http://x.example.com' }, /^domain: must be a bare hostname/],
    [{ domain: 'y.example.com', org_id: t.orgId }, /^body: unexpected field\(s\) "org_id"/],
    [{ domain: 'y.example.com', timezone: 'Nowhere/Land' }, /^timezone: /],
    [{ domain: 'y.example.com', currency: 'EURO' }, /^currency: /],
    [{ domain: 'y.example.com', name: 'Shop\u2066' }, /^name: must not contain control characters or bidirectional formatting \(U\+2066 at character 5\)$/],
    [{ domain: 'y.example.com', name: 'a\u0000b' }, /^name: must not contain control characters/],
  ] as const) {
    const res = await svc.api('POST', '/sites', { token: t.token, body });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(msg);
  }
});

test('POST /sites needs sites:write', async () => {
  const reader = await t.key({ scopes: ['sites:read'] });
  expect((await svc.api('POST', '/sites', { token: reader.token, body: { domain: 'z.example.com' } })).status).toBe(403);
});

test('POST /sites needs a key that reaches every site: a confined one would make a site it cannot see (and the API deletes none)', async () => {
  const confined = await t.key({ scopes: ['sites:write'], sites: [t.siteIds[0]] });
  const res = await svc.api('POST', '/sites', { token: confined.token, body: { domain: 'confined.example.com' } });
  expect(res.status).toBe(403);
  expect(res.body.error).toEqual({ code: 'forbidden', message: 'This key reaches named sites only; creating a site needs a key that reaches every site.' });
  // Refused before its body is read (docs/AUTH.md: reach before parsing), whatever it sent.
  const bad = await svc.api('POST', '/sites', { token: confined.token, body: { domain: '' } });
  expect([bad.status, bad.body]).toEqual([403, res.body]);
  expect((await svc.api('POST', '/sites', { token: t.token, body: { domain: 'confined.example.com' } })).status).toBe(201); // nothing was made
});

/** The statuses, sorted, of requests sent at the same moment. */
async function atOnce(requests: (() => Promise<{ status: number }>)[]): Promise<number[]> {
  return (await Promise.all(requests.map((r) => r()))).map((res) => res.status).sort();
}

test('concurrent creations of one domain, also by two organisations, give one site and 409s', async () => {
  const other = await svc.tenant({ scopes: ['sites:write'] });
  const create = (token: string) => () => svc.api('POST', '/sites', { token, body: { domain: 'race.example.net' } });
  const statuses = await atOnce([t.token, other.token, t.token, other.token, t.token, other.token].map(create));
  expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
  const holders = [...(await svc.api('GET', '/sites', { token: t.token })).body.data, ...(await svc.api('GET', '/sites', { token: other.token })).body.data]
    .filter((s: { domain: string }) => s.domain === 'race.example.net');
  expect(holders).toHaveLength(1);
});

test('concurrent renames of two sites to one domain: one lands, the other is 409 and keeps its domain', async () => {
  const settings = await t.key({ scopes: ['settings:write'] });
  const rename = (siteId: string) => () => svc.api('PATCH', `/sites/${siteId}/settings`, { token: settings.token, body: { domain: 'renamed.example.net' } });
  expect(await atOnce([rename(t.siteIds[1]), rename(t.siteIds[2])])).toEqual([200, 409]);
  const domains = await Promise.all([1, 2].map(async (i) => (await svc.api('GET', `/sites/${t.siteIds[i]}/settings`, { token: settings.token })).body.data.domain));
  expect(domains.filter((d: string) => d === 'renamed.example.net')).toHaveLength(1);
});
