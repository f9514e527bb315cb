import net from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { setClock } from '../../core/clock';
import { visitorIdFor } from '../../ingest/hash';
import { collectorOf } from '../../ingest/live/module';
import { startTestService, type TestService } from '../support/harness';
import { request, type HttpResult } from '../support/http';

/**
 * POST /api/event paths the callback-based handler and the collector's fast path must keep: a client
 * leaving mid-body, a roll-up over several domains (the collector's general path), query strings on
 * the path, and a name that is an Object.prototype key (stored as '' or '{}' before: the Plausible
 * name table was an object literal).
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ TALLY_TRUST_PROXY: 'loopback' });
});
afterAll(() => svc.stop());

const post = (body: unknown, path = '/api/event'): Promise<HttpResult> =>
  request('POST', `${svc.plainBase}${path}`, { raw: JSON.stringify(body), headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 Firefox/125.0' } });

async function names(siteId: string): Promise<string[]> {
  const store = svc.running.ctx.store;
  const rows = await store.query<{ name: string }>(`SELECT name FROM ${store.table('events')} WHERE site_id = {s:UUID} ORDER BY ts, event_id`, { s: siteId });
  return rows.map((r) => r.name);
}

test('a client that leaves mid-body gets nothing stored and the next request is served', async () => {
  const t = await svc.tenant({ domain: 'after-abort.example' });
  const port = Number(new URL(svc.plainBase).port);
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('POST /api/event HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 500\r\n\r\n' +
        '{"n":"cut","u":"https://after-abort.example/"');
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  expect((await post({ n: 'pageview', u: 'https://after-abort.example/' })).status).toBe(202);
  expect(await names(t.siteId)).toEqual(['pageview']);
});

test('a roll-up over several domains stores the event for each known site that admits its hostname', async () => {
  const a = await svc.tenant({ domain: 'roll-a.example' });
  const b = await svc.tenant({ domain: 'roll-b.example' });
  const stats = collectorOf(svc.running.ctx)!.stats;
  const dropped = stats.dropped.hostname_not_allowed;
  const res = await post({ n: 'pageview', u: 'https://roll-a.example/x', d: 'roll-a.example, unknown-roll.example ,roll-b.example' });
  expect(res.status).toBe(202);
  expect(await names(a.siteId)).toEqual(['pageview']);
  // roll-b.example does not admit the page's hostname: dropped and counted, the answer is roll-a's.
  expect(await names(b.siteId)).toEqual([]);
  expect(stats.dropped.hostname_not_allowed).toBe(dropped + 1);
  const store = svc.running.ctx.store;
  const [row] = await store.query<{ v: string }>(`SELECT toString(visitor_id) AS v FROM ${store.table('events')} WHERE site_id = {s:UUID}`, { s: a.siteId });
  expect(res.body.visitor_id).toBe(row.v);
});

test('a query string on the path is the same endpoint; another path is not', async () => {
  const t = await svc.tenant({ domain: 'query-path.example' });
  expect((await post({ n: 'pageview', u: 'https://query-path.example/' }, '/api/event?x=1')).status).toBe(202);
  expect((await post({ n: 'pageview', u: 'https://query-path.example/' }, '/api/events')).status).toBe(404);
  expect(await names(t.siteId)).toEqual(['pageview']);
});

test('an event named after an Object.prototype key is stored under that name', async () => {
  const t = await svc.tenant({ domain: 'proto-name.example' });
  for (const n of ['constructor', 'toString', '__proto__']) expect((await post({ n, u: 'https://proto-name.example/' })).status).toBe(202);
  expect((await names(t.siteId)).sort()).toEqual(['__proto__', 'constructor', 'toString']);
});

test('a body led by a UTF-8 byte order mark is read as its JSON, as import reads a file', async () => {
  const t = await svc.tenant({ domain: 'bom.example' });
  const body = '\ufeff' + JSON.stringify({ n: 'bom', u: 'https://bom.example/' });
  const res = await request('POST', `${svc.plainBase}/api/event`, { raw: body, headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(202);
  expect(await names(t.siteId)).toEqual(['bom']);
  // Only a leading one: a BOM inside the text is refused as before.
  expect((await request('POST', `${svc.plainBase}/api/event`, { raw: ' \ufeff{}', headers: { 'content-type': 'application/json' } })).status).toBe(400);
});

test('a body that is not UTF-8 is refused, not stored with U+FFFD in place of its bytes', async () => {
  const latin1 = Buffer.from('{"n":"pageview","u":"https://page.example/caf\xe9","d":"page.example"}', 'latin1');
  const res = await request('POST', `${svc.plainBase}/api/event`, { raw: latin1, headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({ code: 'invalid_request', message: 'The request body is not valid UTF-8 text.' });
});

describe('a compressed body (Content-Encoding, as a server-side client may send)', () => {
  const send = (raw: Buffer | string, encoding: string) =>
    request('POST', `${svc.plainBase}/api/event`, { raw, headers: { 'content-type': 'application/json', 'content-encoding': encoding } });

  test('gzip, deflate and br are decoded and stored; identity is the body as sent', async () => {
    const t = await svc.tenant({ domain: 'encoded.example' });
    const event = (n: string) => Buffer.from(JSON.stringify({ n, u: 'https://encoded.example/' }));
    expect((await send(gzipSync(event('gzip')), 'gzip')).status).toBe(202);
    expect((await send(deflateSync(event('deflate')), 'Deflate')).status).toBe(202);
    expect((await send(brotliCompressSync(event('br')), 'br')).status).toBe(202);
    expect((await send(event('identity'), 'identity')).status).toBe(202);
    expect((await names(t.siteId)).sort()).toEqual(['br', 'deflate', 'gzip', 'identity']);
  });

  test('refusals: an unsupported encoding 415 naming it, a corrupt body 400, a body over 16 KB once decoded 413', async () => {
    const t = await svc.tenant({ domain: 'encoded-bad.example' });
    const unsupported = await send('{}', 'compress');
    expect(unsupported.status).toBe(415);
    expect(unsupported.body.error).toMatchObject({ code: 'unsupported_media_type', message: expect.stringContaining('Content-Encoding compress') });
    const corrupt = await send(Buffer.from('not gzip at all'), 'gzip');
    expect(corrupt.status).toBe(400);
    expect(corrupt.body.error).toMatchObject({ code: 'invalid_request', message: 'The request body is not valid gzip data.' });
    // 40 KB of JSON compresses to well under 16 KB on the wire.
    const bomb = gzipSync(JSON.stringify({ n: 'big', u: 'https://encoded-bad.example/', p: { pad: 'x'.repeat(40_000) } }));
    expect(bomb.length).toBeLessThan(16 * 1024);
    const big = await send(bomb, 'gzip');
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    expect(await names(t.siteId)).toEqual([]);
  });
});

describe('the first-party token (first_party_cookie sites)', () => {
  const fromBrowser = (body: unknown) => request('POST', `${svc.plainBase}/api/event`, {
    raw: JSON.stringify(body), headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 Firefox/125.0', origin: 'https://page.example' },
  });
  const cookieSite = async (domain: string, settings: object = {}) => {
    const t = await svc.tenant({ domain, scopes: ['settings:write'] });
    const res = await svc.api('PATCH', `/sites/${t.siteId}/settings`, { token: t.token, body: { session_strategy: 'first_party_cookie', ...settings } });
    expect(res.status).toBe(200);
    return t;
  };
  const visitors = async (siteId: string) => {
    const store = svc.running.ctx.store;
    const rows = await store.query<{ v: string }>(`SELECT toString(visitor_id) AS v FROM ${store.table('events')} WHERE site_id = {s:UUID}`, { s: siteId });
    return rows.map((r) => r.v);
  };

  test('an event dropped by an exclusion still answers the token it carried, so the tracker keeps its cookie', async () => {
    await cookieSite('keep-cookie.example', { excluded_paths: ['/admin/**'] });
    const token = 'tokenFromCookie01';
    const dropped = await fromBrowser({ n: 'pageview', u: 'https://keep-cookie.example/admin/x', visitor: token });
    expect(dropped.status).toBe(202);
    expect(dropped.body.visitor).toBe(token);
    // A domain that is no site answers no token, as before.
    expect((await fromBrowser({ n: 'pageview', u: 'https://no-site.example/', visitor: token })).body.visitor).toBeUndefined();
  });

  test('a first page dropped by an exclusion answers the visitor id the token stands for, which the next stored event takes', async () => {
    const t = await cookieSite('first-excluded.example', { excluded_paths: ['/checkout/**'] });
    const dropped = await fromBrowser({ n: 'pageview', u: 'https://first-excluded.example/checkout/pay' });
    const token = dropped.body.visitor as string;
    expect(dropped.body.visitor_id).toBe(visitorIdFor(t.siteId, token));
    expect(await visitors(t.siteId)).toEqual([]);
    const stored = await fromBrowser({ n: 'pageview', u: 'https://first-excluded.example/', visitor: token });
    expect(stored.body.visitor_id).toBe(dropped.body.visitor_id);
    expect(await visitors(t.siteId)).toEqual([dropped.body.visitor_id]);
  });

  // Another site stores the event while the cookie site drops it; or every site drops it, the cookie site listed second.
  test.each([
    ['the cookie site drops the event and another site stores it', 'r', 'r-salted.example', 'tokenFromCookie01'],
    ['every site drops the event, the cookie site listed second', 'r2', 'r2-other.example', 'tokenFromCookie02'],
  ])('several domains: the token is answered when %s', async (_case, prefix, listedFirst, token) => {
    await svc.tenant({ domain: listedFirst });
    const cookie = await cookieSite(`${prefix}-cookie.example`, { allowed_hostnames: [`${prefix}-salted.example`], excluded_paths: ['/admin/**'] });
    const res = await fromBrowser({ n: 'pageview', u: `https://${prefix}-salted.example/admin/x`, d: `${listedFirst},${prefix}-cookie.example`, visitor: token });
    expect(res.status).toBe(202);
    expect(res.body.visitor).toBe(token);
    // Every site dropped it: the ids are the cookie site's (the ones its next stored event takes), though listed second.
    if (prefix === 'r2') expect(res.body.visitor_id).toBe(visitorIdFor(cookie.siteId, token));
  });

  test('several domains: the answer carries the cookie site\'s token even when a cookieless site is listed first; cookie sites share one', async () => {
    const salted = await svc.tenant({ domain: 'multi-salted.example' });
    const first = await cookieSite('multi-c1.example', { allowed_hostnames: ['multi-salted.example'] });
    const second = await cookieSite('multi-c2.example', { allowed_hostnames: ['multi-salted.example'] });
    const res = await fromBrowser({ n: 'pageview', u: 'https://multi-salted.example/', d: 'multi-salted.example,multi-c1.example,multi-c2.example' });
    expect(res.status).toBe(202);
    const token = res.body.visitor as string;
    expect(token).toMatch(/^[\w-]{16}$/);
    expect(await visitors(first.siteId)).toEqual([visitorIdFor(first.siteId, token)]);
    expect(await visitors(second.siteId)).toEqual([visitorIdFor(second.siteId, token)]);
    expect(await visitors(salted.siteId)).toHaveLength(1);
  });
});

/**
 * tally.ids() on an excluded page (a checkout under an excluded path) must name the visitor and the
 * session the payment belongs to: the answer carries the real ids, read without storing the event or
 * extending the session.
 */
test('an event dropped by an exclusion answers the visitor\'s real ids and stores nothing', async () => {
  const t = await svc.tenant({ domain: 'excluded-ids.example', scopes: ['settings:write'] });
  expect((await svc.api('PATCH', `/sites/${t.siteId}/settings`, { token: t.token, body: { excluded_paths: ['/checkout/**'] } })).status).toBe(200);
  const from = (ip: string, path: string) => request('POST', `${svc.plainBase}/api/event`, {
    raw: JSON.stringify({ n: 'pageview', u: `https://excluded-ids.example${path}` }),
    headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 Firefox/125.0', 'x-forwarded-for': ip },
  });
  const landed = await from('198.51.100.7', '/pricing');
  const checkout = await from('198.51.100.7', '/checkout/pay');
  expect(checkout.status).toBe(202);
  expect(checkout.body).toEqual({ visitor_id: landed.body.visitor_id, session_id: landed.body.session_id });
  // Another visitor whose first page is excluded: the visitor id their next stored page takes.
  const first = await from('198.51.100.8', '/checkout/pay');
  const next = await from('198.51.100.8', '/');
  expect(first.body.visitor_id).toBe(next.body.visitor_id);
  expect(first.body.visitor_id).not.toBe(landed.body.visitor_id);
  expect(await names(t.siteId)).toEqual(['pageview', 'pageview']);
});

test('an excluded country answers real ids on a cookie site (its visitor may pay from elsewhere), a decoy on a hashed-id one', async () => {
  const send = (domain: string, visitor?: string) => request('POST', `${svc.plainBase}/api/event`, {
    raw: JSON.stringify({ n: 'pageview', u: `https://${domain}/`, visitor }),
    headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 Firefox/125.0', 'x-forwarded-for': '81.2.69.160' }, // GB
  });
  for (const strategy of ['salted_hash', 'first_party_cookie'] as const) {
    const domain = `gb-${strategy.replaceAll('_', '-')}.example`;
    const t = await svc.tenant({ domain, scopes: ['settings:write'] });
    const settings = (body: object) => svc.api('PATCH', `/sites/${t.siteId}/settings`, { token: t.token, body: { session_strategy: strategy, ...body } });
    expect((await settings({ excluded_countries: ['gb'] })).status).toBe(200);
    const dropped = await send(domain, 'tokenFromCookie03');
    expect(dropped.status).toBe(202);
    expect(await names(t.siteId)).toEqual([]);
    expect((await settings({ excluded_countries: [] })).status).toBe(200);
    const stored = await send(domain, 'tokenFromCookie03');
    if (strategy === 'first_party_cookie') expect(dropped.body.visitor_id).toBe(stored.body.visitor_id);
    else expect(dropped.body.visitor_id).not.toBe(stored.body.visitor_id);
  }
});

test('an excluded page does not extend the session; another host\'s page answers no real ids', async () => {
  const t = await svc.tenant({ domain: 'excluded-idle.example', scopes: ['settings:write'] });
  expect((await svc.api('PATCH', `/sites/${t.siteId}/settings`, { token: t.token, body: { excluded_paths: ['/checkout/**'] } })).status).toBe(200);
  const send = (url: string, d?: string) => request('POST', `${svc.plainBase}/api/event`, {
    raw: JSON.stringify({ n: 'pageview', u: url, ...(d ? { d } : {}) }),
    headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 Firefox/125.0', 'x-forwarded-for': '198.51.100.20' },
  });
  try {
    setClock('2026-11-21T10:00:00Z');
    const landed = await send('https://excluded-idle.example/');
    setClock('2026-11-21T10:29:00Z');
    expect((await send('https://excluded-idle.example/checkout/pay')).body.session_id).toBe(landed.body.session_id);
    // 31 minutes after the last stored page: the excluded one in between did not keep the session going.
    setClock('2026-11-21T10:31:00Z');
    expect((await send('https://excluded-idle.example/next')).body.session_id).not.toBe(landed.body.session_id);
    // A mirror's page (hostname not allowed) is answered with a decoy: nothing of the visitor's real ids.
    const mirror = await send('https://mirror.example/', 'excluded-idle.example');
    expect(mirror.status).toBe(202);
    expect(mirror.body.visitor_id).not.toBe(landed.body.visitor_id);
  } finally {
    setClock(null);
  }
});

test('a deeply nested body is answered for what it is, not with a 503: ignored in an unknown field, refused in props', async () => {
  const t = await svc.tenant({ domain: 'deep.example' });
  const deep = '['.repeat(7000) + ']'.repeat(7000);
  const ignored = await request('POST', `${svc.plainBase}/api/event`, {
    raw: `{"n":"pageview","u":"https://deep.example/","extra":${deep}}`, headers: { 'content-type': 'text/plain' },
  });
  expect(ignored.status).toBe(202);
  const refused = await request('POST', `${svc.plainBase}/api/event`, {
    raw: `{"n":"pageview","u":"https://deep.example/","p":{"a":${deep}}}`, headers: { 'content-type': 'text/plain' },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toBe('p.a must be a string, number or boolean');
  expect(await names(t.siteId)).toEqual(['pageview']);
  // The same line in an import is one rejected line; the lines after it import.
  const lines = [`{"ts":"2026-01-01T00:00:00Z","name":"pageview","url":"https://deep.example/a","props":{"a":${deep}}}`,
    JSON.stringify({ ts: '2026-01-01T00:00:01Z', name: 'after', url: 'https://deep.example/b' })].join('\n');
  const out = await svc.admin<{ imported: number; rejected: number; errors: { line: number }[] }>('events import', { site: t.siteId }, lines);
  expect(out).toMatchObject({ imported: 1, rejected: 1 });
  expect(out.errors[0].line).toBe(1);
});
