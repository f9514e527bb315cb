import https from 'node:https';
import { setClock } from '../../core/clock';
import { collectorOf } from '../../ingest/live/module';
import { startTestService, type TestService } from '../support/harness';
import { request, type HttpResult } from '../support/http';

/** POST /api/event over real HTTPS: the contract of PRODUCT.md §3 and the refusals. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ TALLY_TRUST_PROXY: 'loopback' });
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

function post(body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return request('POST', `${svc.base}/api/event`, {
    raw: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'user-agent': CHROME, ...headers },
  });
}

interface Row { name: string; pathname: string; hostname: string; referrer: string; channel: string; country: string; city: string;
  browser: string; device: string; is_bot: number; bot_kind: string; crawler_name: string; crawler_operator: string; link: string;
  props: Record<string, string>; value_cents: number; visitor_id: string; session_id: string; session_start: string; entry_path: string; utm_source: string }

async function rows(siteId: string): Promise<Row[]> {
  const store = svc.running.ctx.store;
  return store.query<Row>(
    `SELECT name, pathname, hostname, referrer, channel, country, city, browser, device, is_bot, bot_kind, crawler_name, crawler_operator,
            link, props, value_cents, toString(visitor_id) AS visitor_id, toString(session_id) AS session_id, session_start, entry_path, utm_source
     FROM ${store.table('events')} WHERE site_id = {s:UUID} ORDER BY ts, event_id`, { s: siteId });
}

describe('accepted events', () => {
  test('the Plausible payload, long and short names, is stored enriched and answered 202 after the insert', async () => {
    const t = await svc.tenant({ domain: 'collect.example' });
    const long = await post({ name: 'pageview', url: 'https://collect.example/pricing?utm_source=newsletter&utm_medium=email', domain: 'collect.example',
      referrer: 'https://www.google.com/' }, { 'x-forwarded-for': '81.2.69.160' });
    expect(long.status).toBe(202);
    expect(long.body).toEqual({ visitor_id: expect.stringMatching(/^\d+$/), session_id: expect.stringMatching(/^\d+$/) });
    expect(long.headers['access-control-allow-origin']).toBe('*');
    const short = await post({ n: 'Signup', u: 'https://collect.example/pricing', d: 'collect.example', p: { plan: 'pro', seats: 2 }, value_cents: 4900 },
      { 'x-forwarded-for': '81.2.69.160' });
    expect(short.status).toBe(202);
    expect(short.body.visitor_id).toBe(long.body.visitor_id);
    const [a, b] = await rows(t.siteId);
    expect(a).toMatchObject({ name: 'pageview', pathname: '/pricing', hostname: 'collect.example', referrer: 'google.com', channel: 'Email',
      utm_source: 'newsletter', country: 'GB', city: 'London', browser: 'Chrome', device: 'Desktop', is_bot: 0 });
    // The second event of the session carries the first one's attributes.
    expect(b).toMatchObject({ name: 'Signup', props: { plan: 'pro', seats: '2' }, value_cents: 4900, channel: 'Email', referrer: 'google.com',
      session_id: a.session_id, session_start: a.session_start, entry_path: '/pricing' });
  });

  test('a server-side forwarder reports a crawler through User-Agent and X-Forwarded-For', async () => {
    const t = await svc.tenant({ domain: 'crawled.example' });
    const res = await post({ name: 'pageview', url: 'https://crawled.example/docs/api' }, {
      'user-agent': 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
      'x-forwarded-for': '2001:4860:4860::8888',
    });
    expect(res.status).toBe(202);
    const [r] = await rows(t.siteId);
    expect(r).toMatchObject({ is_bot: 1, bot_kind: 'ai_training', crawler_name: 'GPTBot', crawler_operator: 'OpenAI', country: 'CA' });
  });

  test('outbound clicks and downloads keep their target in link (Plausible names accepted too)', async () => {
    const t = await svc.tenant({ domain: 'links.example' });
    await post({ n: 'exit_link', u: 'https://links.example/', d: 'links.example', p: { url: 'https://github.com/x' } });
    await post({ n: 'File Download', u: 'https://links.example/', d: 'links.example', p: { url: 'https://links.example/a.pdf' } });
    const r = await rows(t.siteId);
    expect(r.map((x) => [x.name, x.link, x.props])).toEqual([
      ['exit_link', 'https://github.com/x', {}],
      ['file_download', 'https://links.example/a.pdf', {}],
    ]);
  });

  test('an outbound click or download without its target is a 400 naming props.url, and nothing is stored', async () => {
    const t = await svc.tenant({ domain: 'nolink.example' });
    for (const n of ['exit_link', 'Outbound Link: Click', 'File Download']) {
      const res = await post({ n, u: 'https://nolink.example/', d: 'nolink.example', props: { other: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/^props\.url is required for (exit_link|file_download) events: the link target/);
    }
    expect(await rows(t.siteId)).toHaveLength(0);
  });

  test('a domain list records the event on each known site; props may be a JSON string', async () => {
    const a = await svc.tenant({ domain: 'roll.example' });
    const b = await svc.tenant({ domain: 'app.roll.example' });
    const res = await post({ n: 'pageview', u: 'https://app.roll.example/', d: 'roll.example,app.roll.example,nobody.example', p: '{"k":"v"}' });
    expect(res.status).toBe(202);
    expect((await rows(a.siteId))[0].props).toEqual({ k: 'v' });
    expect(await rows(b.siteId)).toHaveLength(1);
  });

  test('a site created with a Unicode domain is its ASCII form, as browsers send it: d in Unicode or in punycode, or none, all store', async () => {
    const u = await svc.tenant({ domain: 'bücher.example' }); // through `site create`, as the CLI would
    for (const d of ['bücher.example', 'xn--bcher-kva.example', undefined]) {
      expect((await post({ n: 'pageview', u: 'https://bücher.example/', d })).status).toBe(202);
    }
    const stored = await rows(u.siteId);
    expect(stored.map((r) => r.hostname)).toEqual(['xn--bcher-kva.example', 'xn--bcher-kva.example', 'xn--bcher-kva.example']);
  });

  test('an unknown domain is answered 202 like any other, dropped and counted', async () => {
    const before = collectorOf(svc.running.ctx)!.stats.dropped.unknown_domain;
    const res = await post({ n: 'pageview', u: 'https://nobody-here.example/', d: 'nobody-here.example' });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['session_id', 'visitor_id']);
    expect(collectorOf(svc.running.ctx)!.stats.dropped.unknown_domain).toBe(before + 1);
    const stats = await svc.admin('events stats', {});
    expect(stats.dropped.unknown_domain).toBe(before + 1);
  });

  test('in a domain list every unknown domain is counted, also when a known one stores the event', async () => {
    const t = await svc.tenant({ domain: 'listed-known.example' });
    const count = () => collectorOf(svc.running.ctx)!.stats.dropped.unknown_domain;
    const before = count();
    expect((await post({ n: 'pageview', u: 'https://listed-known.example/', d: 'listed-known.example,nope-1.example' })).status).toBe(202);
    expect(count()).toBe(before + 1);
    expect(await rows(t.siteId)).toHaveLength(1);
    await post({ n: 'pageview', u: 'https://nope-2.example/', d: 'nope-2.example,nope-3.example' });
    expect(count()).toBe(before + 3);
  });

  test('an unknown domain\'s answers behave like a real site\'s: the same ids for the same visitor, others for another', async () => {
    const send = (domain: string, ua = CHROME) => post({ n: 'pageview', u: `https://${domain}/` }, { 'user-agent': ua, 'x-forwarded-for': '203.0.113.9' });
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
    await svc.tenant({ domain: 'real-one.example' });
    for (const domain of ['real-one.example', 'nobody-there.example']) {
      const [a, b, c] = [await send(domain), await send(domain), await send(domain, firefox)];
      expect([a.status, b.status, c.status]).toEqual([202, 202, 202]);
      expect(b.body).toEqual(a.body);
      expect(c.body.visitor_id).not.toBe(a.body.visitor_id);
      expect(Object.keys(a.body).sort()).toEqual(['session_id', 'visitor_id']);
    }
    expect((await send('other-nobody.example')).body.visitor_id).not.toBe((await send('nobody-there.example')).body.visitor_id);
  });

  test('concurrent requests share ClickHouse inserts', async () => {
    const t = await svc.tenant({ domain: 'burst.example' });
    const stats = collectorOf(svc.running.ctx)!.stats;
    const [stored, batches] = [stats.stored, stats.batches];
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) =>
      post({ n: 'pageview', u: `https://burst.example/p/${i}` }, { 'x-forwarded-for': `10.0.${i % 7}.${i}` })));
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(await rows(t.siteId)).toHaveLength(150);
    expect(stats.stored - stored).toBe(150);
    expect(stats.batches - batches).toBeLessThan(150);
    // Every 202 is timed: the operator's view of the server's share of the latency.
    const shown = await svc.admin('events stats', {});
    expect(shown.ack_ms.count).toBeGreaterThanOrEqual(150);
    expect(shown.ack_ms.p50).toBeGreaterThan(0);
    expect(shown.ack_ms.max).toBeGreaterThanOrEqual(shown.ack_ms.p99);
  });

  test('CORS preflight is answered', async () => {
    const res = await request('OPTIONS', `${svc.base}/api/event`, { headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
  });

  test('the plain HTTP port collects too (sites served over http)', async () => {
    const t = await svc.tenant({ domain: 'plain.example' });
    const res = await request('POST', `${svc.plainBase}/api/event`, { raw: JSON.stringify({ n: 'pageview', u: 'http://plain.example/' }),
      headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(202);
    expect(await rows(t.siteId)).toHaveLength(1);
  });
});

describe('refusals', () => {
  const ok = { n: 'pageview', u: 'https://refuse.example/', d: 'refuse.example' };
  test.each([
    ['malformed JSON', '{"n": "pageview",', 400, 'invalid_request', 'not valid JSON'],
    ['a body that is not an object', '[1,2]', 400, 'invalid_request', 'JSON object'],
    ['a missing name', { u: 'https://refuse.example/' }, 400, 'invalid_request', 'name is required'],
    ['a missing url', { n: 'pageview' }, 400, 'invalid_request', 'url is required'],
    ['a relative url', { n: 'pageview', u: '/x' }, 400, 'invalid_request', 'u must be an absolute URL'],
    ['a relative url (long name)', { name: 'pageview', url: '/x' }, 400, 'invalid_request', 'url must be an absolute URL'],
    ['a non-http url', { n: 'pageview', u: 'javascript:alert(1)' }, 400, 'invalid_request', 'u must be an http or https URL'],
    ['a non-string name', { ...ok, n: 7 }, 400, 'invalid_request', 'n must be a string'],
    ['a non-string name (long name)', { name: 7, url: 'https://refuse.example/' }, 400, 'invalid_request', 'name must be a string'],
    ['a name over 120 characters', { ...ok, n: 'x'.repeat(121) }, 400, 'invalid_request', 'n is longer than 120 characters'],
    ['a non-string referrer', { ...ok, r: 5 }, 400, 'invalid_request', 'r must be a string'],
    ['a non-string domain', { ...ok, d: 5 }, 400, 'invalid_request', 'd must be a string'],
    ['a hash mode that is not a flag', { ...ok, h: 'yes' }, 400, 'invalid_request', 'h must be 1, 0, true or false'],
    ['an outbound click without its target', { ...ok, n: 'Outbound Link: Click', p: {} }, 400, 'invalid_request', 'p.url is required for exit_link events'],
    ['an outbound click to no URL', { ...ok, n: 'Outbound Link: Click', p: { url: 'notaurl' } }, 400, 'invalid_request', 'p.url must be an absolute URL'],
    ['a download whose target is a number', { ...ok, n: 'file_download', props: { url: 5 } }, 400, 'invalid_request', 'props.url must be an absolute URL'],
    ['props of the wrong type', { ...ok, p: [1] }, 400, 'invalid_request', 'p must be an object'],
    ['props that are not JSON', { ...ok, props: '{oops' }, 400, 'invalid_request', 'props must be an object (or a JSON-encoded object)'],
    ['a nested prop', { ...ok, p: { a: { b: 1 } } }, 400, 'invalid_request', 'p.a must be a string, number or boolean'],
    ['a fractional value_cents', { ...ok, value_cents: 1.5 }, 400, 'invalid_request', 'value_cents'],
    ['a string value_cents', { ...ok, value_cents: '100' }, 400, 'invalid_request', 'value_cents'],
    ['a negative value_cents', { ...ok, value_cents: -700 }, 400, 'invalid_request', 'value_cents must not be negative'],
    ['a value_cents beyond exact integers', { ...ok, value_cents: 1e20 }, 400, 'invalid_request', 'value_cents must be at most 9007199254740991 cents'],
    ['an unpaired surrogate in a prop', '{"n":"pageview","u":"https://refuse.example/","p":{"a":"\\ud800"}}', 400, 'invalid_request', 'p.a must be valid Unicode text'],
    ['an unpaired surrogate in a JSON-encoded prop', JSON.stringify({ ...ok, p: '{"a":"\\udc00"}' }), 400, 'invalid_request', 'p.a must be valid Unicode text'],
    ['an unpaired surrogate in the name', '{"n":"x\\ud800","u":"https://refuse.example/"}', 400, 'invalid_request', 'n must be valid Unicode text'],
  ])('%s is a 400 naming the problem', async (_label, body, status, code, message) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toContain(message);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  test('an event ClickHouse could not store is refused alone: the events batched with it are stored', async () => {
    const t = await svc.tenant({ domain: 'poison.example' });
    const good = Array.from({ length: 40 }, (_, i) => post({ n: 'pageview', u: `https://poison.example/p${i}` }));
    const bad = post('{"n":"pageview","u":"https://poison.example/bad","p":{"a":"\\ud800"}}');
    const answers = await Promise.all([...good.slice(0, 20), bad, ...good.slice(20)]);
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(40).fill(202), 400]);
    expect(await rows(t.siteId)).toHaveLength(40);
  });

  test('a prop value cut at its limit never splits a character in two', async () => {
    const t = await svc.tenant({ domain: 'clip.example' });
    const value = 'x'.repeat(1999) + '\u{1F600}'; // the emoji's two halves straddle the 2,000-unit limit
    expect((await post({ n: 'pageview', u: 'https://clip.example/', p: { v: value } })).status).toBe(202);
    expect((await rows(t.siteId))[0].props.v).toBe('x'.repeat(1999));
  });

  test('a body above 16 KB is 413', async () => {
    const res = await post({ ...ok, p: { big: 'x'.repeat(17 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  test('a chunked body (no Content-Length) growing past 16 KB is 413', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(`${svc.base}/api/event`, { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'text/plain' } },
        (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write('x'.repeat(1024));
      req.end();
    });
    expect(status).toBe(413);
  });

  test('other content types are 415', async () => {
    const res = await post('n=pageview', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect(res.body.error.message).toMatch(/^Content-Type "application\/x-www-form-urlencoded" is not accepted: send the event as JSON/);
  });

  test('other methods are 405 with the methods allowed', async () => {
    const res = await request('GET', `${svc.base}/api/event`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST, OPTIONS');
    // The API's code and words for the same refusal.
    expect(res.body.error).toEqual({ code: 'method_not_allowed', message: 'GET is not a method of this endpoint; it allows POST, OPTIONS.' });
  });
});
