import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { launchBrowser } from './share-browser';
import { DESKTOP_UA, openTracked, pollRows, servePages, trackerIds, trackerPage, type PageServer } from './tracker-pages';

/**
 * The tracker's delivery in headless Chromium against a real Tally, where answers are slow, refused
 * or never come: every event goes at once with the page it happened on, a 503 is sent again, one bad
 * call drops only itself; and the navigations SPAs and browsers make (replaceState, back/forward
 * cache), links in SVG and shadow roots, the site's www twin, a tag loaded twice. Pages come from a
 * small server under made-up hostnames Chromium resolves to 127.0.0.1; rows are read from ClickHouse.
 */
let svc: TestService;
let browser: Browser;
let pages: PageServer;
let pagePort = 0;
let site: Tenant;
let cookieSite: Tenant;

const body = () => `<svg width="20" height="20"><a href="https://external.example/svg"><rect width="20" height="20"/></a></svg>
<a id="www" href="http://www.deliver.test:${pagePort}/elsewhere">www</a> <a id="blog" href="http://blog.deliver.test/post">blog</a>
<a id="export" download href="/export?fmt=csv">export</a> <x-card></x-card>
<script>customElements.define('x-card', class extends HTMLElement { connectedCallback() {
  this.attachShadow({ mode: 'open' }).innerHTML = '<a id="shadow" href="https://external.example/shadow">in shadow</a>';
} });</script>`;


beforeAll(async () => {
  svc = await startTestService();
  site = await svc.tenant({ domain: 'deliver.test' });
  cookieSite = await svc.tenant({ domain: 'crumb.test', scopes: ['settings:write'] });
  const strategy = { session_strategy: 'first_party_cookie', excluded_paths: ['/admin/**'] };
  expect((await svc.api('PATCH', `/sites/${cookieSite.siteId}/settings`, { token: cookieSite.token, body: strategy })).status).toBe(200);
  pages = await servePages((host, url, res) => {
    const page = trackerPage(svc, host, 'data-allow-automation', body(), url.pathname.includes('twice') ? 2 : 1);
    res.writeHead(200, { 'content-type': 'text/html' }).end(url.pathname.startsWith('/module') ? page.replace('<script defer', '<script type="module"') : page);
  });
  pagePort = pages.port;
  browser = await launchBrowser(['deliver.test', 'www.deliver.test', 'blog.deliver.test', 'crumb.test', 'external.example']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await svc?.stop();
});

interface Row { name: string; pathname: string; link: string; visitor_id: string; session_id: string }

/** The rows of pages under `prefix` (each test has its own), once there are `n`. */
function rows(siteId: string, prefix: string, n: number, settle = 0): Promise<Row[]> {
  const store = svc.running.ctx.store;
  const read = () => store.query<Row>(`SELECT name, pathname, link, toString(visitor_id) AS visitor_id, toString(session_id) AS session_id
    FROM ${store.table('events')} WHERE site_id = {s:UUID} AND startsWith(pathname, {p:String}) ORDER BY ts, event_id`, { s: siteId, p: prefix });
  return pollRows(read, n, settle);
}
const pairs = (r: Row[]) => r.map((x) => `${x.name} ${x.pathname}${x.link ? ' ' + x.link : ''}`).sort();

const open = (host: string, path: string, slow = 0) => openTracked(browser, `http://${host}:${pagePort}${path}`, slow);

const run = (page: Page, script: string) => page.evaluate(script);
const done = async (context: BrowserContext) => {
  await context.unrouteAll({ behavior: 'ignoreErrors' });
  await context.close();
};

test('answers held back: each event goes at once, stamped with the page it happened on', async () => {
  const { context, page } = await open('deliver.test', '/slow', 1500);
  await run(page, `history.pushState({}, '', '/slow/b'); tally('OnB'); history.pushState({}, '', '/slow/c')`);
  const r = await rows(site.siteId, '/slow', 4);
  expect(pairs(r)).toEqual(['OnB /slow/b', 'pageview /slow', 'pageview /slow/b', 'pageview /slow/c']);
  await done(context);
});

test('a 503 is sent again and stored once; props that are not JSON drop that event only', async () => {
  const context = await browser.newContext({ userAgent: DESKTOP_UA });
  let refused = 0;
  await context.route('**/api/event', async (route) => {
    if (refused++ === 0) return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"overloaded","message":"busy"}}' });
    return route.continue();
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://deliver.test:${pagePort}/retry`);
  await run(page, `const o = {}; o.self = o; tally('Circular', { props: o }); tally('After', { props: { ok: 'yes' } })`);
  const r = await rows(site.siteId, '/retry', 2, 2500);
  expect(pairs(r)).toEqual(['After /retry', 'pageview /retry']);
  expect(refused).toBe(3);
  expect(errors).toEqual([]);
  await done(context);
});

// Retries come after 2 and 4 s, or after a longer Retry-After (a floor: refused browsers still back off).
test.each([
  ['3', '/later', 2900, Infinity, 2],
  ['-5', '/soon', 1900, 2900, 1],
])('a 503 with Retry-After %s is sent again after it, read across origins as Tally exposes it', async (after, path, atLeast, below, refusals) => {
  const context = await browser.newContext({ userAgent: DESKTOP_UA });
  const sent: number[] = [];
  await context.route('**/api/event', async (route) => {
    sent.push(Date.now());
    if (sent.length > refusals) return route.continue();
    return route.fulfill({
      status: 503, contentType: 'application/json', body: '{"error":{"code":"overloaded","message":"busy"}}',
      headers: { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After', 'retry-after': after },
    });
  });
  const page = await context.newPage();
  await page.goto(`http://deliver.test:${pagePort}${path}`);
  expect(pairs(await rows(site.siteId, path, 1))).toEqual([`pageview ${path}`]);
  expect(sent[1] - sent[0]).toBeGreaterThanOrEqual(atLeast);
  expect(sent[1] - sent[0]).toBeLessThan(below);
  // The second retry backs off to 4 s, past a shorter Retry-After.
  if (refusals > 1) expect(sent[2] - sent[1]).toBeGreaterThanOrEqual(3900);
  await done(context);
});

// A module tag has no currentScript and is found by its file name; a tag loaded twice counts each page once.
test.each([
  ['a module tag (no currentScript) is found by its file name and tracks', '/module', '/module/next', 500],
  ['a tag loaded twice counts each page once', '/twice', '/twice/2', 800],
])('%s', async (_name, path, next, settle) => {
  const { context, page } = await open('deliver.test', path);
  await run(page, `history.pushState({}, '', '${next}')`);
  const r = await rows(site.siteId, path, 2, settle);
  expect(pairs(r)).toEqual([`pageview ${path}`, `pageview ${next}`]);
  await done(context);
});

test('replaceState to a new path and a back/forward-cache restore are pageviews', async () => {
  const { context, page } = await open('deliver.test', '/router');
  await rows(site.siteId, '/router', 1);
  await run(page, `history.replaceState({}, '', '/router/login')`);
  await rows(site.siteId, '/router', 2);
  await run(page, `history.replaceState({}, '', '/router/login?step=2')`); // the same path: nothing
  await run(page, `window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))`);
  const r = await rows(site.siteId, '/router', 3, 500);
  expect(r.map((x) => `${x.name} ${x.pathname}`)).toEqual(['pageview /router', 'pageview /router/login', 'pageview /router/login']);
  await done(context);
});

test('links in SVG and shadow roots are followed; the www twin is the site; a download attribute is a download', async () => {
  const { context, page } = await open('deliver.test', '/links');
  await rows(site.siteId, '/links', 1);
  for (const target of ['svg rect', '#shadow', '#www', '#blog', '#export']) {
    await page.evaluate((sel) => {
      const el = sel === '#shadow' ? document.querySelector('x-card')!.shadowRoot!.querySelector(sel) : document.querySelector(sel);
      el!.addEventListener('click', (e) => e.preventDefault());
      el!.dispatchEvent(new MouseEvent('click', { bubbles: true, composed: true, cancelable: true }));
    }, target);
  }
  const r = await rows(site.siteId, '/links', 5, 500);
  expect(pairs(r)).toEqual([
    'exit_link /links http://blog.deliver.test/post', 'exit_link /links https://external.example/shadow', 'exit_link /links https://external.example/svg',
    `file_download /links http://deliver.test:${pagePort}/export?fmt=csv`, 'pageview /links',
  ]);
  await done(context);
});

test('first_party_cookie: a click before the first answer, and a page the site excludes, keep one visitor and its cookie', async () => {
  const { context, page } = await open('crumb.test', '/home', 800);
  await page.evaluate(() => document.querySelector<HTMLAnchorElement>('#blog')!.addEventListener('click', (e) => e.preventDefault()));
  await page.click('#blog');
  // The cookie is written once an answer confirms the site keeps one (a page left before that keeps none).
  await trackerIds(page);
  await page.goto(`http://crumb.test:${pagePort}/admin/settings`);
  await trackerIds(page);
  const [jar] = await context.cookies();
  expect(jar).toMatchObject({ name: 'tally_vid' });
  await page.goto(`http://crumb.test:${pagePort}/home2`);
  const r = await rows(cookieSite.siteId, '/', 3);
  expect(r.map((x) => `${x.name} ${x.pathname}`).sort()).toEqual(['exit_link /home', 'pageview /home', 'pageview /home2']);
  expect(new Set(r.map((x) => x.visitor_id)).size).toBe(1);
  expect(new Set(r.map((x) => x.session_id)).size).toBe(1);
  expect((await context.cookies())[0].value).toBe(jar.value);
  await done(context);
});
