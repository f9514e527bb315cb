import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import type { Tenant, TestService } from '../support/harness';
import { boardBrowserSuite, collectErrors, screenshot, type BoardBrowserSuite } from './share-browser';

/** The widget card, embedded in an iframe of another page, drawn in headless Chromium. */
let suite: BoardBrowserSuite;
let svc: TestService;
let t: Tenant;
let context: BrowserContext;
const hosts: http.Server[] = [];

beforeAll(async () => {
  suite = await boardBrowserSuite({ width: 420, height: 260 });
  ({ svc, t, context } = suite);
});
afterAll(async () => {
  for (const h of hosts) h.close();
  await suite?.stop();
});

const api = async (path: string) => (await svc.api('GET', `/sites/${t.siteId}${path}`, { token: t.token })).body.data;
const putWidget = async (body: object) => (await svc.api('PUT', `/sites/${t.siteId}/widget`, { token: t.token, body })).body.data;

/**
 * A customer's page on another origin (its own little server on 127.0.0.1, so Chromium's
 * private-network rules treat both as local) embedding the card in an iframe.
 */
async function embed(slug: string) {
  const host = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>Customer</title><iframe id="w" src="${svc.base}/widget/${slug}" width="380" height="200"></iframe>`);
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hosts.push(host);
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(`http://127.0.0.1:${(host.address() as AddressInfo).port}/`);
  const frame = page.frameLocator('#w');
  await frame.locator('body[data-ready="true"]').waitFor();
  return { page, frame, errors };
}

test('an area card shows the visitors figure of the API and one point per day', async () => {
  const w = await putWidget({ enabled: true, type: 'analytics', metric: 'visitors', chart_style: 'area' });
  const { page, frame, errors } = await embed(w.slug);
  const overview = await api('/overview?period=last30d');
  expect(await frame.locator('[data-figure="value"]').getAttribute('data-value')).toBe(String(overview.visitors));
  expect(await frame.locator('.card-head').textContent()).toContain('Visitors · last 30 days');
  expect(await frame.locator('svg.chart-area path.area').count()).toBe(1);
  expect(await frame.locator('svg.chart-area circle.point').count()).toBe(30);
  expect(await frame.locator('[data-figure="revenue_cents"]').count()).toBe(0);
  await screenshot(page, 'widget-area.png');
  expect(errors).toEqual([]);
  expect((await api('/widget')).view_count).toBe(1);
});

test('a realtime bar card shows who is online in the last 10 minutes, bar by minute, and revenue once published', async () => {
  const w = await putWidget({ type: 'realtime', metric: 'online', chart_style: 'bar', publish_revenue: true });
  const { page, frame, errors } = await embed(w.slug);
  const live = await api('/realtime?minutes=10');
  expect(await frame.locator('[data-figure="value"]').getAttribute('data-value')).toBe(String(live.visitors));
  expect(await frame.locator('.card-head').textContent()).toContain('Online now');
  expect(await frame.locator('svg.chart-bar rect.bar').count()).toBe(30);
  const heights = await frame.locator('svg.chart-bar rect.bar').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  expect(heights.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  // Revenue over the last 30 minutes: none, but it is published and shown.
  expect(await frame.locator('[data-figure="revenue_cents"]').getAttribute('data-value')).toBe('0');
  await screenshot(page, 'widget-realtime-bar.png');
  expect(errors).toEqual([]);
});

test('a refused refresh keeps the figures drawn, marked stale; a widget gone (404) says it is not available', async () => {
  const w = await putWidget({ enabled: true, type: 'analytics', metric: 'visitors', chart_style: 'area' });
  const page = await context.newPage();
  await page.clock.install();
  let answer: 'pass' | 429 | 404 = 'pass';
  await page.route('**/widget/*.json', (route) => (answer === 'pass' ? route.continue() : route.fulfill({
    status: answer, contentType: 'application/json', body: '{"error":{"code":"refused","message":"refused"}}',
  })));
  await page.goto(`${svc.base}/widget/${w.slug}`);
  await page.waitForSelector('body[data-ready="true"]');
  const value = await page.getAttribute('[data-figure="value"]', 'data-value');
  answer = 429;
  await page.clock.runFor(60_000);
  await page.waitForSelector('body[data-stale="true"]');
  expect(await page.getAttribute('[data-figure="value"]', 'data-value')).toBe(value);
  answer = 'pass';
  await page.clock.runFor(60_000);
  await page.waitForFunction(() => !document.body.hasAttribute('data-stale'));
  answer = 404;
  await page.clock.runFor(60_000);
  await page.waitForSelector('body[data-ready="error"]');
  expect(await page.textContent('p.empty')).toBe('This widget is not available.');
  await page.close();
});

test('a disabled widget answers 404 in the frame', async () => {
  const w = await putWidget({ enabled: false });
  const page = await context.newPage();
  const res = await page.goto(`${svc.base}/widget/${w.slug}`);
  expect(res?.status()).toBe(404);
});
