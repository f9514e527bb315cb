import type { Browser } from 'playwright-core';
import { visitorIdFor } from '../../ingest/hash';
import http from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';
import { launchBrowser } from './share-browser';
import { openTracked, pollRows, servePages, trackerIds, trackerPage, type PageServer } from './tracker-pages';

/**
 * The tracker in headless Chromium against a real Tally: pages are served by a tiny HTTP server under
 * made-up hostnames that Chromium resolves to 127.0.0.1, the script and the collection endpoint come
 * from Tally's plain HTTP port, rows are read back from ClickHouse.
 */
let svc: TestService;
let browser: Browser;
let pages: PageServer;
let pagePort = 0;
let shop: Tenant;
let cookie: Tenant;

const BODY = `<a id="out" href="https://external.example/path">out</a> <a id="pdf" href="/files/report.pdf">pdf</a>
<button id="spa" onclick="history.pushState({}, '', '/spa/next')">next</button>`;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.tenant({ domain: 'shop.test' });
  cookie = await svc.tenant({ domain: 'cookie.test', scopes: ['settings:write'] });
  pages = await servePages((host, url, res) => {
    if (url.pathname.startsWith('/files/')) return void res.writeHead(204).end();
    const extra = url.searchParams.get('attrs') ?? 'data-allow-automation';
    res.writeHead(200, { 'content-type': 'text/html' }).end(trackerPage(svc, host === '127.0.0.1' ? 'shop.test' : host, extra, BODY));
  });
  pagePort = pages.port;
  browser = await launchBrowser(['shop.test', 'cookie.test', 'external.example']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await svc?.stop();
});

interface Row { name: string; pathname: string; link: string; props: Record<string, string>; value_cents: number; visitor_id: string;
  session_id: string; browser: string; referrer: string }

async function rows(siteId: string): Promise<Row[]> {
  const store = svc.running.ctx.store;
  return store.query<Row>(`SELECT name, pathname, link, props, value_cents, toString(visitor_id) AS visitor_id, toString(session_id) AS session_id,
    browser, referrer FROM ${store.table('events')} WHERE site_id = {s:UUID} ORDER BY ts, event_id`, { s: siteId });
}

const waitForRows = (siteId: string, n: number) => pollRows(() => rows(siteId), n);

const open = (host: string, path = '/', query = '') => openTracked(browser, `http://${host}:${pagePort}${path}${query}`);

const ids = trackerIds;

test('pageview, SPA navigation, custom event, outbound click and download; no cookie or storage on a cookieless site', async () => {
  const { context, page } = await open('shop.test', '/landing');
  // Events are stamped on arrival and beacons sent together may arrive in either order, so each step
  // waits for its event before the next one: the order asserted below is then the order of actions.
  await waitForRows(shop.siteId, 1);
  await page.click('#spa');
  await waitForRows(shop.siteId, 2);
  await page.goBack(); // popstate back to /landing
  await waitForRows(shop.siteId, 3);
  await page.evaluate(() => (window as unknown as { tally(n: string, o: object): void }).tally('Signup', { props: { plan: 'pro' }, value_cents: 4900 }));
  await waitForRows(shop.siteId, 4);
  const known = await ids(page);
  await page.click('#pdf');
  await waitForRows(shop.siteId, 5);
  // The site's strategy is salted_hash (the default): nothing written on the device.
  const storage = await page.evaluate(() => ({ cookie: document.cookie, local: localStorage.length, session: sessionStorage.length }));
  expect(storage).toEqual({ cookie: '', local: 0, session: 0 });
  await page.click('#out');
  const r = await waitForRows(shop.siteId, 6);
  expect(r.map((x) => [x.name, x.pathname])).toEqual([
    ['pageview', '/landing'], ['pageview', '/spa/next'], ['pageview', '/landing'], ['Signup', '/landing'],
    ['file_download', '/landing'], ['exit_link', '/landing'],
  ]);
  expect(r[3]).toMatchObject({ props: { plan: 'pro' }, value_cents: 4900 });
  expect(r[4].link).toBe(`http://shop.test:${pagePort}/files/report.pdf`);
  expect(r[5].link).toBe('https://external.example/path');
  expect(new Set(r.map((x) => x.session_id)).size).toBe(1);
  expect(known).toEqual({ visitor_id: r[0].visitor_id, session_id: r[0].session_id });
  expect(r[0].browser).toBe('Chrome');

  expect(await context.cookies()).toEqual([]);
  await context.close();
});

test('a first_party_cookie site keeps a token for a year; a strategy change removes it without a snippet edit', async () => {
  await svc.api('PATCH', `/sites/${cookie.siteId}/settings`, { token: cookie.token, body: { session_strategy: 'first_party_cookie' } });
  const { context, page } = await open('cookie.test');
  const first = await ids(page);
  const [jar] = await context.cookies();
  expect(jar).toMatchObject({ name: 'tally_vid', domain: 'cookie.test' });
  expect(jar.expires - Date.now() / 1000).toBeGreaterThan(360 * 86400);
  expect(first.visitor_id).toBe(visitorIdFor(cookie.siteId, jar.value));

  await page.goto(`http://cookie.test:${pagePort}/again`);
  expect((await ids(page)).visitor_id).toBe(first.visitor_id);

  await svc.api('PATCH', `/sites/${cookie.siteId}/settings`, { token: cookie.token, body: { session_strategy: 'salted_hash' } });
  await page.goto(`http://cookie.test:${pagePort}/after-change`);
  await ids(page);
  expect(await context.cookies()).toEqual([]);
  await context.close();
});

test('localhost pages and automated browsers are ignored unless asked', async () => {
  const before = (await rows(shop.siteId)).length;
  const local = await open('127.0.0.1', '/local', '?attrs=data-allow-automation');
  await ids(local.page);
  const automated = await open('shop.test', '/automated', '?attrs=');
  await ids(automated.page);
  const asked = await open('127.0.0.1', '/asked', '?attrs=data-allow-automation%20data-allow-localhost');
  await ids(asked.page);
  await Promise.all([local.context.close(), automated.context.close(), asked.context.close()]);
  const after = await rows(shop.siteId);
  // Only the page that opted in to both was counted (its hostname is not the site's, so it is
  // dropped by the allowed-hostnames rule; the request itself is what we check for).
  expect(after.length).toBe(before);
  const stats = await svc.admin('events stats', {});
  expect(stats.dropped.hostname_not_allowed).toBe(1);
});

test('GET /js/tally.js serves the built tracker, under 2 KB gzipped, with an ETag', async () => {
  const url = `${svc.plainBase}/js/tally.js`;
  const res = await request('GET', url);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toContain('application/javascript');
  expect(gzipSync(Buffer.from(res.text)).length).toBeLessThan(2048);
  const again = await request('GET', url, { headers: { 'if-none-match': String(res.headers.etag) } });
  expect(again.status).toBe(304);
});

test('a browser that accepts gzip gets the tracker gzipped, under 2 KB on the wire', async () => {
  const plain = await request('GET', `${svc.plainBase}/js/tally.js`); // no Accept-Encoding: as built
  expect(plain.headers['content-encoding']).toBeUndefined();
  const identity = plain.text;
  const raw = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    http.get(`${svc.plainBase}/js/tally.js`, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(parts) }));
    }).on('error', reject);
  });
  expect(raw.headers['content-encoding']).toBe('gzip');
  expect(raw.headers.vary).toBe('Accept-Encoding');
  expect(raw.body.length).toBeLessThan(2048);
  expect(gunzipSync(raw.body).toString()).toBe(identity);
});
