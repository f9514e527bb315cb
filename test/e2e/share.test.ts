import { existsSync } from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import type { Tenant, TestService } from '../support/harness';
import { boardBrowserSuite, collectErrors, screenshot, type BoardBrowserSuite } from './share-browser';

/** The public share board drawn in headless Chromium: what is on the page, and what is not. */
let suite: BoardBrowserSuite;
let svc: TestService;
let t: Tenant;
let context: BrowserContext;

beforeAll(async () => {
  suite = await boardBrowserSuite({ width: 1200, height: 900 });
  ({ svc, t, context } = suite);
});
afterAll(() => suite?.stop());

const api = async (path: string) => (await svc.api('GET', `/sites/${t.siteId}${path}`, { token: t.token })).body.data;
const fmt = (n: number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(n);

test('the board draws exactly its enabled panels with the API figures, and switches period', async () => {
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, {
    token: t.token, body: { label: 'Acme in public', heatmap: false, tech: false, max_range_days: 30 },
  })).body.data;
  const page = await context.newPage();
  const errors = collectErrors(page);
  const res = await page.goto(`${svc.base}/share/${board.slug}`);
  expect(res?.status()).toBe(200);
  await page.waitForSelector('body[data-ready="true"]');

  expect(await page.textContent('h1')).toBe('Acme in public');
  const drawn = await page.$$eval('section[data-panel]', (els) => els.map((e) => e.getAttribute('data-panel')));
  expect(drawn).toEqual(['visitors', 'geo', 'goals', 'pages', 'funnel', 'sources', 'ai_panel', 'keywords', 'channel_quality', 'imported_history']);
  for (const off of ['heatmap', 'tech', 'revenue']) expect(await page.$(`section[data-panel="${off}"]`)).toBeNull();

  // Default window for a 30-day board: the last 30 days in the site's timezone (UTC).
  const overview = await api('/overview?period=last30d');
  expect(await page.textContent('[data-figure="visitors"] .figure-value')).toBe(fmt(overview.visitors));
  expect(await page.textContent('[data-figure="views"] .figure-value')).toBe(fmt(overview.views));
  const series = await api('/timeseries?period=last30d');
  expect(await page.getAttribute('section[data-panel="visitors"] svg.chart', 'data-points')).toBe(String(series.length));
  const countries = await api('/breakdowns/country?period=last30d&limit=10');
  const drawnCountries = await page.$$eval('section[data-panel="geo"] li', (els) => els.map((e) => [e.getAttribute('data-label'), Number(e.getAttribute('data-value'))]));
  expect(drawnCountries).toEqual(countries.map((c: { label: string; visitors: number }) => [c.label, c.visitors]));
  const steps = await page.$$eval('section[data-panel="funnel"] li[data-step]', (els) => els.map((e) => Number(e.getAttribute('data-visitors'))));
  expect(steps).toEqual([3, 2]);
  expect(await page.textContent('section[data-panel="keywords"] .empty')).toContain('No search-console keywords');
  expect(await page.textContent('body')).not.toMatch(/Revenue|\$42/);
  await screenshot(page, 'share-board.png');

  await page.selectOption('#period', 'last7d');
  await page.waitForSelector('body[data-ready="true"]');
  const week = await api('/overview?period=last7d');
  expect(await page.textContent('[data-figure="visitors"] .figure-value')).toBe(fmt(week.visitors));
  expect(await page.$$eval('#period option', (els) => els.map((e) => (e as HTMLOptionElement).value))).not.toContain('last12m');
  expect(errors).toEqual([]);
  expect(existsSync('test-output/share-board.png')).toBe(true);
});

test('with revenue and the heatmap switched on, both are drawn from the same figures as the API', async () => {
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { revenue: true, heatmap: true } })).body.data;
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(`${svc.base}/share/${board.slug}`);
  await page.waitForSelector('body[data-ready="true"]');
  expect(await page.textContent('section[data-panel="revenue"] [data-figure="revenue_cents"] .figure-value')).toBe('$42.00');
  const cells = await api('/heatmap?period=last30d');
  const filled = await page.$$eval('section[data-panel="heatmap"] rect.cell.filled', (els) => els.map((e) => `${e.getAttribute('data-day')}:${e.getAttribute('data-hour')}:${e.getAttribute('data-visitors')}`));
  expect(filled.sort()).toEqual(cells.map((c: { day: number; hour: number; visitors: number }) => `${c.day}:${c.hour}:${c.visitors}`).sort());
  await screenshot(page, 'share-board-revenue.png');
  expect(errors).toEqual([]);
});

/**
 * What visitors send is drawn as sent but cannot disguise itself or hide figures: a bidirectional
 * override is shown as U+FFFD, a 2,000-character path leaves its count readable, and a 200-character
 * label wraps instead of pushing the period selector off the page.
 */
test('hostile labels: bidi controls shown, counts kept beside long paths, a long label wraps', async () => {
  const s = await svc.tenant({ scopes: ['settings:write', 'analytics:read'] });
  const long = `/long/${'L'.repeat(1994)}`; // 2,000 characters, the longest path stored
  const line = (v: string, path: string) => JSON.stringify({ ts: '2026-03-10T10:00:00Z', name: 'pageview', url: `https://${s.domain}${path}`, visitor: v, user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' });
  const lines = [line('a', long), line('b', long), line('c', '/bidi/\u202eevil')];
  expect(await svc.admin('events import', { site: s.siteId }, lines.join('\n'))).toMatchObject({ imported: 3 });
  const board = (await svc.api('PUT', `/sites/${s.siteId}/share`, { token: s.token, body: { label: 'W'.repeat(200) } })).body.data;
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(`${svc.base}/share/${board.slug}`);
  await page.waitForSelector('body[data-ready="true"]');
  const rows = await page.$$eval('section[data-panel="pages"] li', (els) => els.map((e) => ({
    label: e.querySelector('.label')!.textContent, value: e.querySelector('.value')!.textContent, width: e.querySelector('.value')!.getBoundingClientRect().width,
  })));
  // Top pages, then entry pages.
  expect(rows.map((r) => r.label)).toEqual([long, '/bidi/\ufffdevil', long, '/bidi/\ufffdevil']);
  expect(rows.map((r) => r.value)).toEqual(['2', '1', '2', '1']);
  for (const r of rows) expect(r.width).toBeGreaterThan(0);
  const select = (await page.locator('#period').boundingBox())!;
  expect(select.x + select.width).toBeLessThanOrEqual(1200);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1200);
  expect(errors).toEqual([]);
});

test('a refused period change keeps the board drawn and its selector, says why, and retries on request', async () => {
  const board = (await svc.api('GET', `/sites/${t.siteId}/share`, { token: t.token })).body.data;
  const page = await context.newPage();
  let refuse = false;
  await page.route('**/share/*/data*', (route) => (!refuse ? route.continue() : route.fulfill({
    status: 429, contentType: 'application/json', headers: { 'retry-after': '20' },
    body: '{"error":{"code":"rate_limited","message":"Too many new views of public figures from this address; retry in 20 s."}}',
  })));
  await page.goto(`${svc.base}/share/${board.slug}`);
  await page.waitForSelector('body[data-ready="true"]');
  const month = await page.textContent('[data-figure="visitors"] .figure-value');
  refuse = true;
  await page.selectOption('#period', 'last7d');
  await page.waitForSelector('body[data-ready="error"]');
  expect(await page.textContent('p.error[role="alert"]')).toContain('Too many new views');
  // The last board drawn stays, and the selector names its period again.
  expect(await page.textContent('[data-figure="visitors"] .figure-value')).toBe(month);
  expect(await page.inputValue('#period')).toBe('last30d');
  refuse = false;
  await page.click('p.error button.retry');
  await page.waitForSelector('body[data-ready="true"]');
  expect(await page.inputValue('#period')).toBe('last7d');
  expect(await page.$('p.error')).toBeNull();
  expect(await page.textContent('[data-figure="visitors"] .figure-value')).toBe(fmt((await api('/overview?period=last7d')).visitors));
  // A proxy's HTML error page on the first load: the reason names the status, with a retry.
  const first = await context.newPage();
  await first.route('**/share/*/data*', (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<html>Bad gateway</html>' }));
  await first.goto(`${svc.base}/share/${board.slug}`);
  await first.waitForSelector('body[data-ready="error"]');
  expect(await first.textContent('p.error')).toContain('The board could not be loaded (HTTP 502).');
  await Promise.all([page.close(), first.close()]);
});

test('an inactive board answers 404 in the browser', async () => {
  const board = (await svc.api('GET', `/sites/${t.siteId}/share`, { token: t.token })).body.data;
  await svc.api('DELETE', `/sites/${t.siteId}/share`, { token: t.token });
  const page = await context.newPage();
  const res = await page.goto(`${svc.base}/share/${board.slug}`);
  expect(res?.status()).toBe(404);
  expect(await page.textContent('h1')).toBe('Not found');
});
