import { setClock } from '../../core/clock';
import { visitorIdFor } from '../../ingest/hash';
import { collectorOf } from '../../ingest/live/module';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request, type HttpResult } from '../support/http';

/** Live sessions, the three session strategies and the site exclusion settings, with a frozen clock. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ TALLY_TRUST_PROXY: 'loopback' });
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

interface Hit { at: string; path?: string; host?: string; ip?: string; ua?: string; referrer?: string; visitor?: string; origin?: boolean }

function hit(t: Tenant, h: Hit): Promise<HttpResult> {
  setClock(h.at);
  const headers: Record<string, string> = { 'content-type': 'text/plain', 'user-agent': h.ua ?? CHROME, 'x-forwarded-for': h.ip ?? '81.2.69.160' };
  if (h.origin) headers.origin = `https://${t.domain}`;
  const body = { n: 'pageview', u: `https://${h.host ?? t.domain}${h.path ?? '/'}`, d: t.domain, r: h.referrer, visitor: h.visitor };
  return request('POST', `${svc.base}/api/event`, { raw: JSON.stringify(body), headers });
}

interface Row { pathname: string; visitor_id: string; session_id: string; session_start: string; entry_path: string; channel: string; referrer: string }
async function rows(siteId: string): Promise<Row[]> {
  const store = svc.running.ctx.store;
  return store.query<Row>(`SELECT pathname, toString(visitor_id) AS visitor_id, toString(session_id) AS session_id, session_start, entry_path, channel, referrer
    FROM ${store.table('events')} WHERE site_id = {s:UUID} ORDER BY ts`, { s: siteId });
}

async function settings(t: Tenant, patch: object) {
  const res = await svc.api('PATCH', `/sites/${t.siteId}/settings`, { token: t.token, body: patch });
  expect(res.status).toBe(200);
}

const redisTtl = (key: string) => svc.running.ctx.redis.client.pttl(`${svc.running.ctx.redis.prefix}:ingest:salt:${key}`);

test('a session ends after 30 minutes of inactivity; its first event\'s attributes are on every event', async () => {
  const t = await svc.tenant({ domain: 'sess.example' });
  await hit(t, { at: '2026-05-01T10:00:00Z', path: '/a', referrer: 'https://www.google.com/search?q=x' });
  await hit(t, { at: '2026-05-01T10:29:59.999Z', path: '/b' });
  await hit(t, { at: '2026-05-01T10:59:59.999Z', path: '/c' });
  const [a, b, c] = await rows(t.siteId);
  expect(b).toMatchObject({ session_id: a.session_id, session_start: '2026-05-01 10:00:00.000', entry_path: '/a', channel: 'Organic Search', referrer: 'google.com' });
  expect(c.session_id).not.toBe(a.session_id);
  expect(c).toMatchObject({ session_start: '2026-05-01 10:59:59.999', entry_path: '/c', channel: 'Direct', referrer: '', visitor_id: a.visitor_id });
});

test('salted_hash: one visitor per ip and user agent per day; salts expire within 48 hours', async () => {
  const t = await svc.tenant({ domain: 'salted.example', scopes: ['settings:write'] });
  await settings(t, { session_strategy: 'salted_hash' });
  const first = await hit(t, { at: '2026-05-02T09:00:00Z' });
  const otherUa = await hit(t, { at: '2026-05-02T09:01:00Z', ua: FIREFOX });
  const otherIp = await hit(t, { at: '2026-05-02T09:02:00Z', ip: '8.8.8.8' });
  const later = await hit(t, { at: '2026-05-02T15:00:00Z' });
  const nextDay = await hit(t, { at: '2026-05-03T09:00:00Z' });
  expect(new Set([first, otherUa, otherIp].map((r) => r.body.visitor_id)).size).toBe(3);
  expect(later.body.visitor_id).toBe(first.body.visitor_id);
  expect(later.body.session_id).not.toBe(first.body.session_id);
  expect(nextDay.body.visitor_id).not.toBe(first.body.visitor_id);
  const day = Math.floor(Date.parse('2026-05-03T00:00:00Z') / 86_400_000);
  const ttl = await redisTtl(`day:${day}`);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(48 * 3_600_000 - 9 * 3_600_000); // gone at D+2 00:00, counted from 09:00
  expect(first.body.visitor).toBeUndefined(); // nothing for the browser to keep
});

test('salted_hash: a session crossing midnight continues with its visitor', async () => {
  const t = await svc.tenant({ domain: 'midnight.example' });
  const before = await hit(t, { at: '2026-05-04T23:50:00Z', path: '/late' });
  const after = await hit(t, { at: '2026-05-05T00:05:00Z', path: '/later' });
  const nextSession = await hit(t, { at: '2026-05-05T01:00:00Z' });
  expect(after.body).toEqual(before.body);
  expect(nextSession.body.visitor_id).not.toBe(before.body.visitor_id);
});

test('cookieless_strict: truncated IP, identifiers that do not outlive a session', async () => {
  const t = await svc.tenant({ domain: 'strict.example', scopes: ['settings:write'] });
  await settings(t, { session_strategy: 'cookieless_strict' });
  const a = await hit(t, { at: '2026-05-06T10:05:00Z', ip: '81.2.69.160' });
  const sameNet = await hit(t, { at: '2026-05-06T10:06:00Z', ip: '81.2.69.199' });
  const acrossWindow = await hit(t, { at: '2026-05-06T10:31:00Z', ip: '81.2.69.160' });
  const afterGap = await hit(t, { at: '2026-05-06T11:10:00Z', ip: '81.2.69.160' });
  expect(sameNet.body).toEqual(a.body); // same /24 and user agent: same visitor, same session
  expect(acrossWindow.body).toEqual(a.body); // the session continues over the window boundary
  expect(afterGap.body.visitor_id).not.toBe(a.body.visitor_id); // a new session is a new visitor
  const window = Math.floor(Date.parse('2026-05-06T11:10:00Z') / 1_800_000);
  const ttl = await redisTtl(`window:${window}`);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(3_600_000);
});

test('first_party_cookie: the tracker keeps a token, returning visitors are real, servers get no token', async () => {
  const t = await svc.tenant({ domain: 'cookie.example', scopes: ['settings:write'] });
  await settings(t, { session_strategy: 'first_party_cookie' });
  const first = await hit(t, { at: '2026-05-07T10:00:00Z', origin: true });
  const token = first.body.visitor as string;
  expect(token).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
  expect(first.body.visitor_id).toBe(visitorIdFor(t.siteId, token));
  const weekLater = await hit(t, { at: '2026-05-14T10:00:00Z', origin: true, visitor: token, ip: '8.8.8.8', ua: FIREFOX });
  expect(weekLater.body).toMatchObject({ visitor_id: first.body.visitor_id, visitor: token });
  expect(weekLater.body.session_id).not.toBe(first.body.session_id);
  const server = await hit(t, { at: '2026-05-14T10:01:00Z' });
  expect(server.body.visitor).toBeUndefined();

  // A strategy change applies to the next event: the token is ignored and not echoed (the tracker deletes it).
  await settings(t, { session_strategy: 'salted_hash' });
  const after = await hit(t, { at: '2026-05-14T10:02:00Z', origin: true, visitor: token });
  expect(after.body.visitor).toBeUndefined();
  expect(after.body.visitor_id).not.toBe(first.body.visitor_id);
});

test('exclusion settings apply from the next event, each counted by reason', async () => {
  const t = await svc.tenant({ domain: 'ex.example', scopes: ['settings:write'] });
  const stats = collectorOf(svc.running.ctx)!.stats;
  const dropped = { ...stats.dropped };
  await hit(t, { at: '2026-05-08T10:00:00Z', path: '/admin/users' });
  await settings(t, {
    excluded_paths: ['/admin/**', 'private/*'], allowed_hostnames: ['other.example'],
    excluded_hostnames: ['staging.ex.example'], excluded_countries: ['gb'],
  });
  const at = '2026-05-08T10:01:00Z';
  const ip = '8.8.8.8';
  await hit(t, { at, ip, path: '/admin/users/42' }); // excluded path
  await hit(t, { at, ip, path: '/Admin/Users/7' }); // excluded path: globs are stored lower-cased and match any case
  await hit(t, { at, ip, path: '/private/x' }); // excluded path ('private/*' was given a leading slash)
  await hit(t, { at, ip, path: '/private/x/y' }); // '*' stays within a segment: kept
  await hit(t, { at, ip, host: 'staging.ex.example' }); // excluded hostname
  await hit(t, { at, ip, host: 'www.ex.example', path: '/www' }); // subdomain of the site's domain: kept
  await hit(t, { at, ip, host: 'other.example', path: '/other' }); // allowed hostname: kept
  await hit(t, { at, ip, host: 'elsewhere.example' }); // not allowed
  await hit(t, { at, ip: '81.2.69.160', path: '/from-gb' }); // excluded country
  await settings(t, { excluded_countries: [] });
  await hit(t, { at, ip: '81.2.69.160', path: '/from-gb-again' });
  expect((await rows(t.siteId)).map((r) => r.pathname).sort()).toEqual(['/admin/users', '/from-gb-again', '/other', '/private/x/y', '/www']);
  expect(stats.dropped).toEqual({
    ...dropped,
    excluded_path: dropped.excluded_path + 3,
    excluded_hostname: dropped.excluded_hostname + 1,
    hostname_not_allowed: dropped.hostname_not_allowed + 1,
    excluded_country: dropped.excluded_country + 1,
  });
});

describe('without Redis', () => {
  let down: TestService;
  beforeAll(async () => {
    down = await startTestService({ TALLY_TRUST_PROXY: 'loopback', REDIS_URL: 'redis://127.0.0.1:1' });
  });
  afterAll(() => down.stop());

  test('events are stored and sessions kept in memory', async () => {
    await down.tenant({ domain: 'noredis.example' });
    const send = (at: string) => {
      setClock(at);
      return request('POST', `${down.base}/api/event`, {
        raw: JSON.stringify({ n: 'pageview', u: 'https://noredis.example/' }), headers: { 'content-type': 'text/plain', 'user-agent': CHROME },
      });
    };
    const a = await send('2026-05-09T10:00:00Z');
    const b = await send('2026-05-09T10:10:00Z');
    expect(a.status).toBe(202);
    expect(b.body).toEqual(a.body);
  });
});
