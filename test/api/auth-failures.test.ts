import { AuthFailureLimiter, clientKey } from '../../api/rate-limit';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { testRedis } from '../support/redis';
import { request } from '../support/http';

/**
 * Failed authentications are budgeted per client address (docs/AUTH.md): a flood of made-up tokens
 * would otherwise cost a ClickHouse lookup each and push real keys out of the principal cache.
 */
let svc: TestService;
let t: Tenant;
beforeAll(async () => {
  svc = await startTestService({ TALLY_AUTH_FAILURES_PER_MINUTE: '3', TALLY_TRUST_PROXY: 'loopback' });
  t = await svc.tenant();
});
afterAll(() => svc.stop());

const from = (ip: string, token: string) => svc.api('GET', '/sites', { token, headers: { 'x-forwarded-for': ip } });
const unknownToken = (i: number) => `tly_${String(i).padStart(36, 'Z')}`;

test('past the budget an address is refused 429 with Retry-After, even with a valid key not used lately; other addresses are not', async () => {
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await from('203.0.113.7', unknownToken(i))).status);
  expect(statuses).toEqual([401, 401, 401, 429]);

  const unused = await t.key({ scopes: ['analytics:read'] });
  const refused = await from('203.0.113.7', unused.token);
  expect(refused.status).toBe(429);
  expect(refused.body.error).toEqual({ code: 'rate_limited', message: expect.stringMatching(/failed authentications .* retry in \d+ s/) });
  const retry = Number(refused.headers['retry-after']);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);

  expect((await from('203.0.113.8', t.token)).status).toBe(200);
  expect((await from('203.0.113.8', 'garbage')).status).toBe(401);
});

test('a refused address still serves a key resolved lately: other tenants behind the same NAT are not locked out', async () => {
  const other = await (await svc.tenant()).key({ scopes: ['analytics:read'] });
  expect((await from('192.0.2.77', other.token)).status).toBe(200); // used lately, from anywhere
  for (let i = 0; i < 4; i++) await from('203.0.113.70', unknownToken(100 + i));
  expect((await from('203.0.113.70', unknownToken(200))).status).toBe(429);
  expect((await from('203.0.113.70', other.token)).status).toBe(200);
  // Revoked meanwhile: the cache forgets it at once, so the refused address is refused again.
  await svc.admin('key revoke', { key: other.id });
  expect((await from('203.0.113.70', other.token)).status).toBe(429);
});

test('two Authorization headers are one unusable credential (401), whichever holds a valid key', async () => {
  for (const pair of [[t.token, 'tly_other'], ['tly_other', t.token], [t.token, t.token]]) {
    const res = await request('GET', `${svc.base}/api/v1/sites`, { headers: { 'x-forwarded-for': '192.0.2.60', authorization: pair.map((tok) => `Bearer ${tok}`) } });
    expect(res.status).toBe(401);
  }
});

test('a path that exists under another method is 405 with Allow; a path that does not is 404', async () => {
  const put = await svc.api('PUT', '/sites', { token: t.token, body: {} });
  expect(put.status).toBe(405);
  // HEAD is listed wherever GET is: every GET route answers it.
  expect(put.headers.allow).toBe('GET, HEAD, POST');
  expect(put.body.error).toEqual({ code: 'method_not_allowed', message: 'PUT is not a method of this endpoint; it allows GET, HEAD, POST.' });
  const post = await svc.api('POST', `/sites/${t.siteId}/overview`, { token: t.token, body: {} });
  expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  expect((await svc.api('HEAD', `/sites/${t.siteId}/overview`, { token: t.token })).status).toBe(200);
  // The document is a GET like any other path: another method is 405, not 404.
  const doc = await svc.api('POST', '/openapi.json', { token: t.token, body: {} });
  expect([doc.status, doc.headers.allow]).toEqual([405, 'GET, HEAD']);
  expect((await svc.api('GET', `/sites/${t.siteId}/nothing`, { token: t.token })).status).toBe(404);
  // Paths are matched in their case: /SITES is no endpoint under any method.
  expect((await svc.api('GET', '/SITES', { token: t.token })).status).toBe(404);
  expect([(await svc.api('DELETE', '/SITES', { token: t.token })).status]).toEqual([404]);
  // Authentication still comes first: no token learns nothing of the routes.
  expect((await request('PUT', `${svc.base}/api/v1/sites`)).status).toBe(401);
});

test('a path segment that is not valid percent-encoding: in the site\'s place the same 403 as any site id that is not a uuid, elsewhere a 400 naming it', async () => {
  const notUuid = await svc.api('GET', '/sites/nope/settings', { token: t.token });
  const bad = await svc.api('GET', '/sites/%E0%A4%A/settings', { token: t.token });
  expect([bad.status, bad.body]).toEqual([403, notUuid.body]);
  expect(bad.body.error.code).toBe('forbidden');
  const funnel = await svc.api('GET', `/sites/${t.siteId}/funnels/%ZZ`, { token: t.token });
  expect([funnel.status, funnel.body.error.code, funnel.body.error.message]).toEqual([400, 'invalid_request', 'path: "%ZZ" is not valid percent-encoding']);
  // Authentication still comes first.
  expect((await request('GET', `${svc.base}/api/v1/sites/%E0%A4%A/settings`)).status).toBe(401);
  // The public pages' path ids alike (a board's slug).
  const board = await request('GET', `${svc.base}/share/%ZZ/data`);
  expect([board.status, board.body.error.code, board.body.error.message]).toEqual([400, 'invalid_request', 'path: "%ZZ" is not valid percent-encoding']);
});

test('successful authentications spend nothing of the address budget', async () => {
  for (let i = 0; i < 6; i++) expect((await from('198.51.100.1', t.token)).status).toBe(200);
  expect((await from('198.51.100.1', 'garbage')).status).toBe(401);
});

test('an IPv6 client is counted by its /64, so rotating addresses inside it does not help', async () => {
  const statuses = [];
  for (let i = 1; i <= 4; i++) statuses.push((await from(`2001:db8:1:2::${i.toString(16)}`, 'garbage')).status);
  expect(statuses).toEqual([401, 401, 401, 429]);
  expect((await from('2001:db8:1:3::1', t.token)).status).toBe(200);
});

test('a 401 names the Bearer scheme; every API answer is Cache-Control: no-store', async () => {
  const denied = await from('192.0.2.50', 'garbage');
  expect(denied.headers['www-authenticate']).toBe('Bearer realm="tally"');
  expect(denied.headers['cache-control']).toBe('no-store');
  const ok = await from('192.0.2.50', t.token);
  expect(ok.status).toBe(200);
  expect(ok.headers['cache-control']).toBe('no-store');
  expect(ok.headers['www-authenticate']).toBeUndefined();
  const missing = await svc.api('GET', `/sites/${t.siteId}/nothing`, { token: t.token, headers: { 'x-forwarded-for': '192.0.2.50' } });
  expect(missing.status).toBe(404);
  expect(missing.headers['cache-control']).toBe('no-store');
});

test.each([
  ['203.0.113.9', '203.0.113.9'],
  ['::ffff:203.0.113.9', '203.0.113.9'],
  ['2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
  ['2001:db8::1', '2001:db8:0:0::/64'],
  ['::1', '0:0:0:0::/64'],
])('clientKey(%s) = %s', (ip, key) => {
  expect(clientKey(ip)).toBe(key);
});

test('once every refusal has ended the limiter forgets them all, so the usual request parses no address again', async () => {
  const redis = await testRedis('authfail');
  try {
    const limiter = new AuthFailureLimiter(redis, 1);
    await limiter.failed('198.51.100.1');
    expect(await limiter.failed('198.51.100.1')).toMatchObject({ status: 429 });
    expect(limiter.remembered).toBe(1);
    expect(limiter.refusal('198.51.100.1')?.message).toMatch(/failed authentications/);
    const now = Date.now();
    const later = jest.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    try {
      expect(limiter.refusal('192.0.2.99')).toBeUndefined(); // another address, after the refusal's minute
      expect(limiter.remembered).toBe(0);
    } finally {
      later.mockRestore();
    }
  } finally {
    await redis.close();
  }
});

test('an address refused by another process (the count is shared) is refused before this one looks anything up', async () => {
  const redis = await testRedis('authfail-shared');
  try {
    const [here, there] = [new AuthFailureLimiter(redis, 2), new AuthFailureLimiter(redis, 2)];
    expect(await here.refusedElsewhere('198.51.100.9')).toBeUndefined(); // no failure yet
    await there.failed('198.51.100.9');
    await there.failed('198.51.100.9');
    expect(await here.refusedElsewhere('198.51.100.9')).toBeUndefined(); // the budget is spent, not exceeded
    expect(await there.failed('198.51.100.9')).toMatchObject({ status: 429 });
    expect(here.refusal('198.51.100.9')).toBeUndefined(); // this process has refused nothing itself
    const refused = await here.refusedElsewhere('198.51.100.9');
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(refused!.headers!['Retry-After'])).toBeGreaterThan(0);
    // Remembered: the next request from it costs no round trip.
    expect(here.refusal('198.51.100.9')).toMatchObject({ status: 429 });
    expect(await here.refusedElsewhere('198.51.100.10')).toBeUndefined();
  } finally {
    await redis.close();
  }
});
