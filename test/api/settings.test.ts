import { isCountryCode } from '../../core/countries';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/** GET/PATCH /sites/{siteId}/settings: every normalisation rule and limit of the spec. */
let svc: TestService;
let t: Tenant;
let siteUrl: string;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ domain: 'shop.example.com', scopes: ['settings:write'] });
  siteUrl = `/sites/${t.siteId}/settings`;
});
afterAll(() => svc.stop());

const patch = (body: unknown, token = t.token) => svc.api('PATCH', siteUrl, { token, body });
const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
const countries = many(26 * 26, (i) => String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26))).filter(isCountryCode);

test('GET answers the settings object with active, and meta.site_id', async () => {
  const res = await svc.api('GET', siteUrl, { token: t.token });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    data: {
      name: 'shop.example.com', domain: 'shop.example.com', timezone: 'UTC', currency: 'USD', active: true,
      excluded_paths: [], allowed_hostnames: ['shop.example.com'], excluded_hostnames: [], excluded_countries: [],
      session_strategy: 'salted_hash',
    },
    meta: { site_id: t.siteId },
  });
});

test('an excluded path glob that starts with * is kept as given: **/admin still covers /admin', async () => {
  const res = await patch({ excluded_paths: ['**/admin', '*/private'] });
  expect(res.body.data.excluded_paths).toEqual(['**/admin', '*/private']);
  await patch({ excluded_paths: [] });
});

test('entries are lower-cased and de-duplicated, a path gets its leading slash', async () => {
  const res = await patch({
    excluded_paths: ['Admin/*', '/admin/*', '/Blog/**', 'blog/**', ' /x '],
    allowed_hostnames: ['WWW.Shop.Example.com', 'www.shop.example.com', 'cdn.example.com'],
    excluded_hostnames: ['Staging.Example.com', 'staging.example.com'],
    excluded_countries: ['FR', 'fr', 'De'],
    session_strategy: 'cookieless_strict',
    name: '  Shop  ',
  });
  expect(res.status).toBe(200);
  expect(res.body.meta).toEqual({ site_id: t.siteId });
  expect(res.body.data).toMatchObject({
    name: 'Shop',
    excluded_paths: ['/admin/*', '/blog/**', '/x'],
    allowed_hostnames: ['shop.example.com', 'www.shop.example.com', 'cdn.example.com'],
    excluded_hostnames: ['staging.example.com'],
    excluded_countries: ['fr', 'de'],
    session_strategy: 'cookieless_strict',
    active: true,
  });
  // Saved, not just echoed.
  expect((await svc.api('GET', siteUrl, { token: t.token })).body.data).toEqual(res.body.data);
});

test('the site domain is folded into allowed_hostnames on every save and cannot be removed', async () => {
  const res = await patch({ allowed_hostnames: ['other.example.com'] });
  expect(res.body.data.allowed_hostnames).toEqual(['shop.example.com', 'other.example.com']);
  const emptied = await patch({ allowed_hostnames: [] });
  expect(emptied.body.data.allowed_hostnames).toEqual(['shop.example.com']);
});

test("the site's own domain cannot be excluded (its events would all be dropped), neither by the list nor by a domain change", async () => {
  const other = await svc.tenant({ domain: 'excl.example.com', scopes: ['settings:write'] });
  const url = `/sites/${other.siteId}/settings`;
  const own = await svc.api('PATCH', url, { token: other.token, body: { excluded_hostnames: ['staging.example.com', 'EXCL.example.com'] } });
  expect(own.status).toBe(400);
  expect(own.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^excluded_hostnames: "excl.example.com" excludes the site's own domain/) });
  const parent = await svc.api('PATCH', url, { token: other.token, body: { excluded_hostnames: ['example.com'] } }); // subdomains too
  expect(parent.body.error.message).toBe(`excluded_hostnames: "example.com" excludes the site's own domain "excl.example.com", whose events would all be dropped`);
  expect((await svc.api('PATCH', url, { token: other.token, body: { excluded_hostnames: ['staging.example.com'] } })).status).toBe(200);
  const moved = await svc.api('PATCH', url, { token: other.token, body: { domain: 'staging.example.com' } });
  expect(moved.status).toBe(400);
  expect(moved.body.error.message).toMatch(/^domain: "staging.example.com" is excluded by "staging.example.com" in excluded_hostnames/);
  const both = await svc.api('PATCH', url, { token: other.token, body: { domain: 'staging.example.com', excluded_hostnames: [] } });
  expect(both.status).toBe(200);
  expect(both.body.data).toMatchObject({ domain: 'staging.example.com', excluded_hostnames: [] });
});

test('a rule checked by hand lists its issue in details.issues, as schema refusals do', async () => {
  const res = await patch({ allowed_hostnames: Array.from({ length: 25 }, (_, i) => `h${i}.example.com`) });
  expect(res.status).toBe(400);
  expect(res.body.error.details).toEqual({ issues: [{ path: 'allowed_hostnames', message: 'at most 25 entries are allowed, the site domain included' }] });
});

test('a domain change folds the new domain in and moves nothing else', async () => {
  const other = await svc.tenant({ domain: 'move.example.com', scopes: ['settings:write'] });
  const url = `/sites/${other.siteId}/settings`;
  const res = await svc.api('PATCH', url, { token: other.token, body: { domain: 'New.Example.com' } });
  expect(res.status).toBe(200);
  expect(res.body.data.domain).toBe('new.example.com');
  expect(res.body.data.allowed_hostnames).toEqual(['new.example.com', 'move.example.com']);
  const sites = await svc.api('GET', '/sites', { token: other.token });
  expect(sites.body.data[0]).toMatchObject({ id: other.siteId, domain: 'new.example.com' });
});

test('a domain another site already uses is a 409 conflict', async () => {
  await svc.tenant({ domain: 'taken.example.com' });
  const res = await patch({ domain: 'taken.example.com' });
  expect(res.status).toBe(409);
  expect(res.body.error).toEqual({ code: 'conflict', message: expect.stringContaining('taken.example.com') });
});

test.each([
  ['allowed_hostnames', 24, (i: number) => `h${i}.example.com`],
  ['excluded_paths', 50, (i: number) => `/p${i}`],
  ['excluded_hostnames', 50, (i: number) => `h${i}.example.com`],
  ['excluded_countries', 100, (i: number) => countries[i]],
])('%s accepts its limit and refuses one more', async (field, max, make) => {
  const ok = await patch({ [field]: many(max, make) });
  expect(ok.status).toBe(200);
  const over = await patch({ [field]: many(max + 1, make) });
  expect(over.status).toBe(400);
  expect(over.body.error.code).toBe('invalid_request');
  expect(over.body.error.message).toMatch(new RegExp(`^${field}: at most ${field === 'allowed_hostnames' ? 25 : max} entries`));
});

test('allowed_hostnames counts the folded domain: 25 with it is fine, 25 besides it is not', async () => {
  expect((await patch({ allowed_hostnames: ['shop.example.com', ...many(24, (i) => `a${i}.example.com`)] })).status).toBe(200);
  const over = await patch({ allowed_hostnames: many(25, (i) => `a${i}.example.com`) });
  expect(over.status).toBe(400);
  expect(over.body.error.message).toMatch(/^allowed_hostnames: at most 25 entries/);
});

test('a new domain that would push a full allowed_hostnames over 25 is refused naming domain; sending the list too works', async () => {
  const full = ['shop.example.com', ...many(24, (i) => `a${i}.example.com`)];
  expect((await patch({ allowed_hostnames: full })).status).toBe(200);
  const moved = await patch({ domain: 'moved.example.com' });
  expect(moved.status).toBe(400);
  expect(moved.body.error.message).toMatch(/^domain: allowed_hostnames would hold 26 entries/);
  const both = await patch({ domain: 'moved.example.com', allowed_hostnames: full.slice(1) });
  expect(both.status).toBe(200);
  expect(both.body.data.allowed_hostnames).toEqual(['moved.example.com', ...full.slice(1)]);
  expect((await patch({ domain: 'shop.example.com', allowed_hostnames: [] })).body.data.allowed_hostnames).toEqual(['shop.example.com']);
});

test('an excluded path pasted percent-encoded is saved decoded, as paths are matched; a malformed escape stays', async () => {
  const res = await patch({ excluded_paths: ['/caf%C3%A9/*', '/100%/x'] });
  expect(res.status).toBe(200);
  expect(res.body.data.excluded_paths).toEqual(['/café/*', '/100%/x']);
});

test('a path whose escape decodes to upper case is saved lower-cased, as every list entry is', async () => {
  const res = await patch({ excluded_paths: ['/CAF%C3%89/*', '/caf%C3%A9/*'] });
  expect(res.status).toBe(200);
  expect(res.body.data.excluded_paths).toEqual(['/café/*']);
});

test('limits apply after de-duplication', async () => {
  const res = await patch({ excluded_paths: [...many(50, (i) => `/p${i}`), ...many(50, (i) => `/P${i}`)] });
  expect(res.status).toBe(200);
  expect(res.body.data.excluded_paths).toHaveLength(50);
});

test.each([
  [{ active: false }, /^body: unexpected field\(s\) "active"/],
  [{ site_id: '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d' }, /^body: unexpected field\(s\) "site_id"/],
  [{ domain: 'https://shop.example.com/' }, /^domain: must be a bare hostname/],
  [{ domain: 'shop.example.com:8080' }, /^domain: must be a bare hostname/],
  [{ allowed_hostnames: ['not a host'] }, /^allowed_hostnames\.0: must be a bare hostname/],
  [{ excluded_hostnames: 'staging.example.com' }, /^excluded_hostnames: must be an array$/],
  [{ excluded_countries: ['USA'] }, /^excluded_countries\.0: ISO 3166-1 alpha-2 country codes/],
  [{ excluded_countries: ['de', 'zz'] }, /^excluded_countries\.1: ISO 3166-1 alpha-2 country codes/],
  [{ excluded_countries: ['de', 'zz'] }, /: "zz" is not one$/],
  [{ excluded_paths: [''] }, /^excluded_paths\.0: excluded_paths entries must not be empty/],
  [{ excluded_paths: [42] }, /^excluded_paths\.0: /],
  [{ session_strategy: 'fingerprint' }, /^session_strategy: must be one of first_party_cookie, salted_hash, cookieless_strict$/],
  [{ name: '' }, /^name: /],
  [{ timezone: 'Mars/Olympus' }, /^timezone: unknown IANA timezone/],
])('%j is refused with 400 naming the field', async (body, message) => {
  const res = await patch(body);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.message).toMatch(message);
});

test('a body that is not a JSON object is refused with a 4xx, never a 500', async () => {
  const raw = (text: string, headers?: Record<string, string>) => svc.api('PATCH', siteUrl, { token: t.token, raw: text, headers });
  const array = await raw('[1,2]');
  expect([array.status, array.body.error.message]).toEqual([400, 'body: must be a JSON object, not an array']);
  expect((await raw('"x"')).status).toBe(400);
  const nul = await raw('null');
  expect([nul.status, nul.body.error.code, nul.body.error.message]).toEqual([400, 'invalid_request', 'body: must be a JSON object (the request body is not valid JSON, or is not an object).']);
  expect((await raw('{"name":')).body.error.code).toBe('invalid_request');
  expect((await raw('name=x', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
  expect((await raw(JSON.stringify({ name: 'x'.repeat(200_000) }))).status).toBe(413);
  // Latin-1 bytes are refused, not stored as U+FFFD.
  const latin1 = await svc.api('PATCH', siteUrl, { token: t.token, raw: Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]) });
  expect([latin1.status, latin1.body.error]).toEqual([400, {
    code: 'invalid_request', message: 'body: is not valid UTF-8', details: { issues: [{ path: 'body', message: 'is not valid UTF-8' }] },
  }]);
  expect((await svc.api('GET', siteUrl, { token: t.token })).body.data.name).not.toContain('\uFFFD');
});

test('an unpaired surrogate escape in any write body is a 400 naming the field: it has no UTF-8 form (a 500, or U+FFFD stored where the answer echoed the text)', async () => {
  const w = await svc.tenant({ scopes: ['notes:write', 'settings:write', 'alerts:write', 'funnels:write', 'analytics:read'] });
  const cases: [string, string, string, string][] = [
    ['POST', 'notes', '{"body":"ab\\ud800","occurred_at":"2026-03-10T12:00:00Z"}', 'body: must be valid Unicode text (it holds an unpaired surrogate escape)'],
    ['POST', 'notes', '{"body":"x\\udc00y","occurred_at":"2026-03-10T12:00:00Z"}', 'body: must be valid Unicode text (it holds an unpaired surrogate escape)'],
    ['PATCH', 'settings', '{"name":"a\\ud800"}', 'name: must be valid Unicode text (it holds an unpaired surrogate escape)'],
    ['PATCH', 'settings', '{"excluded_paths":["/a","/b\\udfff"]}', 'excluded_paths.1: must be valid Unicode text (it holds an unpaired surrogate escape)'],
    ['PUT', 'share', '{"label":"a\\ud800"}', 'label: must be valid Unicode text (it holds an unpaired surrogate escape)'],
    ['POST', 'alerts', '{"name":"a\\ud800","trigger_type":"visitors_spike","threshold":5}', 'name: must be valid Unicode text (it holds an unpaired surrogate escape)'],
    ['POST', 'funnels', '{"name":"f","steps":[{"kind":"view","match":"equals","value":"/a"},{"kind":"goal","value":"\\ud800"}],"window_seconds":3600}',
      'steps.1.value: must be valid Unicode text (it holds an unpaired surrogate escape)'],
  ];
  for (const [method, resource, raw, message] of cases) {
    const res = await svc.api(method, `/sites/${w.siteId}/${resource}`, { token: w.token, raw });
    expect([resource, res.status, res.body.error?.code, res.body.error?.message]).toEqual([resource, 400, 'invalid_request', message]);
    // Named as the schema's own refusals are, so details.issues holds it.
    const [path, problem] = message.split(': ');
    expect(res.body.error.details).toEqual({ issues: [{ path, message: problem }] });
  }
  // A whole pair written as escapes is one character and is kept.
  const pair = await svc.api('POST', `/sites/${w.siteId}/notes`, { token: w.token, raw: '{"body":"launch \\ud83d\\ude80","occurred_at":"2026-03-10T12:00:00Z"}' });
  expect([pair.status, pair.body.data.body]).toEqual([201, 'launch \u{1F680}']);
  const notes = (await svc.api('GET', `/sites/${w.siteId}/notes`, { token: w.token })).body.data;
  expect(notes.map((n: { body: string }) => n.body)).toEqual(['launch \u{1F680}']);
});

test('scope and reach come before the body: a key that may not write here is told 403 whatever it sent', async () => {
  const reader = await t.key({ scopes: ['settings:read'] });
  const other = await svc.tenant({ scopes: ['settings:write'] });
  const bodies: [string, Record<string, string>?][] = [['{"name":'], ['name=x', { 'content-type': 'application/x-www-form-urlencoded' }], [JSON.stringify({ name: 'x'.repeat(200_000) })]];
  for (const [text, headers] of bodies) {
    for (const token of [reader.token, other.token]) {
      const res = await svc.api('PATCH', siteUrl, { token, raw: text, headers });
      expect([res.status, res.body.error.code]).toEqual([403, 'forbidden']);
    }
  }
});

test('settings:read may read but not change; changes need settings:write', async () => {
  const reader = await t.key({ scopes: ['settings:read'] });
  expect((await svc.api('GET', siteUrl, { token: reader.token })).status).toBe(200);
  const res = await patch({ name: 'x' }, reader.token);
  expect(res.status).toBe(403);
  expect(res.body.error.code).toBe('forbidden');
});

test('an empty body changes nothing and answers the settings', async () => {
  const before = (await svc.api('GET', siteUrl, { token: t.token })).body.data;
  const res = await patch({});
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual(before);
});

test('concurrent PATCHes of different fields all land (each reads the row the previous one wrote)', async () => {
  const s = await svc.tenant({ scopes: ['settings:write'] });
  const url = `/sites/${s.siteId}/settings`;
  const bodies = [{ name: 'N1' }, { excluded_paths: ['/a'] }, { excluded_hostnames: ['x.later.com'] }, { excluded_countries: ['fr'] }, { session_strategy: 'cookieless_strict' }];
  const answers = await Promise.all(bodies.map((body) => svc.api('PATCH', url, { token: s.token, body })));
  expect(answers.map((r) => r.status)).toEqual(bodies.map(() => 200));
  expect((await svc.api('GET', url, { token: s.token })).body.data).toMatchObject({
    name: 'N1', excluded_paths: ['/a'], excluded_hostnames: ['x.later.com'], excluded_countries: ['fr'], session_strategy: 'cookieless_strict',
  });
});

test('a timezone is stored as ClickHouse spells it, and the site\'s notes then list (a lower-case zone answered 500 there)', async () => {
  const res = await patch({ timezone: 'europe/paris' });
  expect(res.status).toBe(200);
  expect(res.body.data.timezone).toBe('Europe/Paris');
  expect((await patch({ name: 'kept zone' })).body.data.timezone).toBe('Europe/Paris');
  const notes = await svc.api('GET', `/sites/${t.siteId}/notes`, { token: (await t.key({ scopes: ['notes:read'] })).token });
  expect(notes.status).toBe(200);
  const created = await svc.api('POST', '/sites', { token: (await t.key({ scopes: ['sites:write'] })).token, body: { domain: 'zone-case.example', timezone: 'america/new_york' } });
  expect(created.body.data.timezone).toBe('America/New_York');
  const site = await svc.admin<{ timezone: string }>('site create', { org: t.orgId, domain: 'zone-cli.example', timezone: 'asia/KOLKATA' });
  expect(site.timezone).toBe('Asia/Kolkata');
  await patch({ timezone: 'UTC' });
});
