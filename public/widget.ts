import type { Router } from 'express';
import type { AppContext } from '../api/context';
import { notFound } from '../core/errors';
import { isSlug } from '../model/share';
import { viewCounter } from '../model/share-views';
import { WidgetRepo, type WidgetRow } from '../model/widget';
import { publicSite, sendFeed, sendNotFoundPage, sendPage, type PublicSite } from './pages';
import { nowMs } from '../core/clock';
import { FeedCache } from './cache';
import { FeedGate } from './gate';
import { runReport } from '../query';
import { widgetData } from './widget-data';

/**
 * The public widget: /widget/<slug> is an HTML card made for an iframe, /widget/<slug>.json its
 * figures. A disabled widget (or one of an inactive site) answers 404. `view_count` counts card
 * views, not JSON reads.
 */
export interface LiveWidget extends PublicSite { row: WidgetRow }

async function liveWidget(app: AppContext, slug: string): Promise<LiveWidget | undefined> {
  if (!isSlug(slug)) return undefined;
  const row = await new WidgetRepo(app.store).bySlug(slug);
  if (!row?.enabled) return undefined;
  const owner = await publicSite(app, row.site_id);
  return owner && { ...owner, row };
}

async function feed(app: AppContext, cache: FeedCache, gate: FeedGate, slug: string, ip: string | undefined) {
  const widget = await liveWidget(app, slug);
  if (!widget) throw notFound('widget');
  // Keyed by the clock's minute too: the card's windows move with time.
  const key = [JSON.stringify(widget.row), Math.floor(nowMs() / 60_000)].join('|');
  return gate.serve(cache, key, ip, () => widgetData(app, widget, runReport));
}

export default function widgetPublic(router: Router, app: AppContext): void {
  const views = viewCounter(app.store);
  const cache = new FeedCache(10_000);
  const gate = FeedGate.of(app);

  // Express 5 passes a rejected handler promise to the error handler itself.
  router.get('/widget/:file', async (req, res) => {
    const file = String(req.params.file);
    if (file.endsWith('.json')) return sendFeed(res, () => feed(app, cache, gate, file.slice(0, -5), req.ip));
    const widget = await liveWidget(app, file);
    if (!widget) return sendNotFoundPage(res, 'widget');
    // A HEAD (link checkers, unfurlers, uptime probes) loads nothing: not a view.
    if (req.method === 'GET') views.count('widget', widget.row.slug);
    sendPage(res, `${widget.site.name} · Tally`, `widget ${widget.row.chart_style}`, { slug: widget.row.slug }, ['charts.js', 'widget.js']);
  });
}
