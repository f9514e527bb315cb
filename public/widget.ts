import type { NextFunction, Request, Response, Router } from 'express';
import type { AppContext } from '../api/context';
import type { Site } from '../core/domain';
import { AppError, notFound } from '../core/errors';
import { viewCounter } from '../model/share-views';
import { WidgetRepo, type WidgetRow } from '../model/widget';
import { sendJson, sendNotFoundPage, sendPage } from './pages';
import { nowMs } from '../core/clock';
import { FeedCache } from './cache';
import { runReport } from '../query';
import { widgetData } from './widget-data';

/**
 * The public widget: /widget/<slug> is an HTML card made for an iframe, /widget/<slug>.json its
 * figures. A disabled widget (or one of an inactive site) answers 404. `view_count` counts card
 * views, not JSON reads.
 */
const SLUG_RE = /^[A-Za-z0-9_-]{22}$/;

export interface LiveWidget { row: WidgetRow; site: Site; retentionDays: number }

async function liveWidget(app: AppContext, slug: string): Promise<LiveWidget | undefined> {
  if (!SLUG_RE.test(slug)) return undefined;
  const row = await new WidgetRepo(app.store).bySlug(slug);
  if (!row?.enabled) return undefined;
  const site = await app.repos.getSite(row.site_id);
  const org = site && (await app.repos.getOrg(site.org_id));
  return site?.active && org ? { row, site, retentionDays: org.retention_days } : undefined;
}

const wrap = (fn: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) =>
  fn(req, res).catch((err: unknown) => next(err));

async function sendFeed(app: AppContext, cache: FeedCache, slug: string, res: Response): Promise<void> {
  try {
    const widget = await liveWidget(app, slug);
    if (!widget) throw notFound('widget');
    // Keyed by the clock's minute too: the card's windows move with time.
    const key = [JSON.stringify(widget.row), Math.floor(nowMs() / 60_000)].join('|');
    sendJson(res, 200, { data: await cache.get(key, () => widgetData(app, widget, runReport)) });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    sendJson(res, err.status, err.toBody());
  }
}

export default function widgetPublic(router: Router, app: AppContext): void {
  const views = viewCounter(app.store);
  const cache = new FeedCache(10_000);

  router.get('/widget/:file', wrap(async (req, res) => {
    const file = String(req.params.file);
    if (file.endsWith('.json')) return sendFeed(app, cache, file.slice(0, -5), res);
    const widget = await liveWidget(app, file);
    if (!widget) return sendNotFoundPage(res, 'widget');
    views.count('widget', widget.row.slug);
    sendPage(res, `${widget.site.name} · Tally`, `widget ${widget.row.chart_style}`, { slug: widget.row.slug }, ['charts.js', 'widget.js']);
  }));
}
