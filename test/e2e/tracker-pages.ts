import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestService } from '../support/harness';

/** A desktop Chrome: HeadlessChrome's own User-Agent would be stored as a bot. */
export const DESKTOP_UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** The snippet as a site embeds it: the queue stub, then the tag (`copies` times) from Tally's plain HTTP port. */
export function trackerPage(svc: TestService, domain: string, attrs: string, body: string, copies = 1): string {
  const tag = `<script defer data-domain="${domain}" ${attrs} src="http://127.0.0.1:${svc.running.httpPort}/js/tally.js"></script>`;
  return `<!doctype html><html><head><title>t</title>
<script>window.tally=window.tally||function(){(tally.q=tally.q||[]).push(arguments)}</script>
${tag.repeat(copies)}</head><body>${body}</body></html>`;
}

export interface PageServer {
  port: number;
  close(): Promise<void>;
}

/** The customer site: every request is answered by `answer`, under whatever hostname Chromium maps to it. */
export async function servePages(answer: (host: string, url: URL, res: http.ServerResponse) => void): Promise<PageServer> {
  const server = http.createServer((req, res) => answer((req.headers.host ?? '').split(':')[0], new URL(req.url ?? '/', 'http://x'), res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

/**
 * A fresh browser context on `url`, once the tracker is ready (`tally.ids` defined); `slow` holds
 * every answer of the collection endpoint that long.
 */
export async function openTracked(browser: Browser, url: string, slow = 0): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ userAgent: DESKTOP_UA });
  if (slow) {
    await context.route('**/api/event', async (route) => {
      const answer = await route.fetch();
      await new Promise((r) => setTimeout(r, slow));
      await route.fulfill({ response: answer }).catch(() => undefined); // the test may be over
    });
  }
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => typeof (window as unknown as { tally: { ids?: unknown } }).tally.ids === 'function');
  return { context, page };
}

/** The page's `tally.ids()`: resolves once the events sent so far are answered. */
export const trackerIds = (page: Page) =>
  page.evaluate(() => (window as unknown as { tally: { ids(): Promise<{ visitor_id: string; session_id: string }> } }).tally.ids());

/**
 * `read()` polled until it gives `n` rows (20 s at most: a retried event comes after 2 + 4 s or more,
 * and Chromium's timers run late on a loaded machine); with `settle`, read once more that long after,
 * so an event that should not come has had the time to come.
 */
export async function pollRows<T>(read: () => Promise<T[]>, n: number, settle = 0): Promise<T[]> {
  for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((res) => setTimeout(res, 50))) {
    if ((await read()).length >= n) {
      if (settle) await new Promise((res) => setTimeout(res, settle));
      return read();
    }
  }
  return read();
}
