import type { Response } from 'express';
import type { AppContext } from '../api/context';
import type { Site } from '../core/domain';
import { AppError } from '../core/errors';

/**
 * The HTML of the public pages. Pages carry no data and no inline script: the browser fetches the
 * figures from the JSON feeds and draws them (public/assets), so the Content-Security-Policy can
 * forbid everything but same-origin scripts, styles and fetches.
 */
const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:",
  // No frame-ancestors: cards and boards are made to be embedded by any site.
  "base-uri 'none'", "form-action 'none'",
].join('; ');

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Public pages are meant to be embedded and shared, never indexed, cached or leaked by referrer. */
export function publicHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Robots-Tag': 'noindex, nofollow',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
}

function shell(title: string, bodyClass: string, attrs: string, scripts: string[]): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/tally.css">
</head>
<body class="${bodyClass}" ${attrs}>
<main id="app" aria-live="polite"><p class="loading">Loading…</p></main>
${scripts.map((s) => `<script src="/assets/${s}" defer></script>`).join('\n')}
</body>
</html>`;
}

export function sendPage(res: Response, title: string, bodyClass: string, attrs: Record<string, string>, scripts: string[]): void {
  publicHeaders(res);
  const a = Object.entries(attrs).map(([k, v]) => `data-${k}="${escapeHtml(v)}"`).join(' ');
  res.status(200).type('html').send(shell(title, bodyClass, a, scripts));
}

export function sendNotFoundPage(res: Response, what: string): void {
  publicHeaders(res);
  res.status(404).type('html').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/tally.css"></head>
<body class="notfound"><main><h1>Not found</h1><p>This ${escapeHtml(what)} does not exist, has expired or is no longer shared.</p></main></body></html>`);
}

export function sendJson(res: Response, status: number, body: unknown): void {
  publicHeaders(res);
  res.status(status).json(body);
}

/**
 * The JSON feeds answer refusals (404, 400) as JSON with the public headers; anything else is a 500.
 * Any origin may read them: they are public by slug, carry no credentials, and a card in a sandboxed
 * iframe (`sandbox="allow-scripts"`, common in CMS embeds) has an opaque origin, so its fetch of its
 * own feed is a cross-origin request.
 */
export async function sendFeed(res: Response, compute: () => Promise<unknown>): Promise<void> {
  res.set('Access-Control-Allow-Origin', '*');
  try {
    sendJson(res, 200, { data: await compute() });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.headers) res.set(err.headers);
    sendJson(res, err.status, err.toBody());
  }
}

export interface PublicSite { site: Site; retentionDays: number }

/** The site behind a board or card, with its organisation's retention; undefined when the site is inactive (the page is 404). */
export async function publicSite(app: AppContext, siteId: string): Promise<PublicSite | undefined> {
  // Public pages are hit by every viewer: the site comes from the same cache the API uses.
  const site = await app.repos.cachedSite(siteId);
  const org = site && (await app.repos.getOrg(site.org_id));
  return site?.active && org ? { site, retentionDays: org.retention_days } : undefined;
}
