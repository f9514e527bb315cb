import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { setClock } from '../../core/clock';
import { projectRoot } from '../../core/paths';
import { boardFixture } from '../api/share-fixture';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/** Debian's Chromium through playwright-core (no browser download), headless; `hosts` resolve to 127.0.0.1. */
export function launchBrowser(hosts: string[] = []): Promise<Browser> {
  const rules = hosts.length ? [`--host-resolver-rules=${hosts.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`] : [];
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...rules],
  });
}

/** Screenshots land in test-output/ (git-ignored). */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = path.join(projectRoot(), 'test-output');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Console errors and page errors (a CSP violation shows up as a console error). */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

export interface BoardBrowserSuite {
  svc: TestService;
  t: Tenant;
  context: BrowserContext;
  stop(): Promise<void>;
}

/**
 * What the share-board and widget browser tests stand on: a service on a fixed clock, a tenant with
 * the board fixture's traffic, goals and funnel, and a Chromium context of the given viewport (UTC,
 * self-signed HTTPS accepted).
 */
export async function boardBrowserSuite(viewport: { width: number; height: number }): Promise<BoardBrowserSuite> {
  setClock('2026-03-10T15:00:00Z');
  const svc = await startTestService();
  const t = await svc.tenant({ scopes: ['settings:write', 'analytics:read', 'funnels:write', 'goals:write'] });
  await boardFixture(svc, t);
  const browser = await launchBrowser();
  const context = await browser.newContext({ ignoreHTTPSErrors: true, timezoneId: 'UTC', viewport });
  return {
    svc, t, context,
    async stop() {
      await context.close();
      await browser.close();
      setClock(null);
      await svc.stop();
    },
  };
}
