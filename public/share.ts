import type { Router } from 'express';
import type { AppContext } from '../api/context';
import { formatZodError, singleValued } from '../api/route';
import { nowMs } from '../core/clock';
import { invalidRequest, notFound } from '../core/errors';
import { ShareRepo, isLive, isSlug, panelsOf, type ShareRow } from '../model/share';
import { viewCounter } from '../model/share-views';
import { clampWindow, isoSecondsInZone, spelledZone, windowQuery, windowSpan, type Period, type ResolvedWindow } from '../model/notes-window';
import { publicSite, sendFeed, sendNotFoundPage, sendPage, type PublicSite } from './pages';
import { FeedCache } from './cache';
import { lookBackStart, resolvePeriod } from '../query/window/resolve';
import { FeedGate } from './gate';
import { runReport } from '../query';
import { boardData } from './share-data';

/**
 * The public share board: /share/<slug> (the page) and /share/<slug>/data (its figures). No API key
 * is read here and no slug is accepted by the API: the two never stand in for each other. Expired
 * or deactivated boards, and boards of inactive sites, answer 404.
 */

export interface LiveBoard extends PublicSite { row: ShareRow }

export async function liveBoard(app: AppContext, slug: string): Promise<LiveBoard | undefined> {
  if (!isSlug(slug)) return undefined;
  const row = await new ShareRepo(app.store).bySlug(slug);
  if (!row || !isLive(row)) return undefined;
  const owner = await publicSite(app, row.site_id);
  return owner && { ...owner, row };
}

/** The longest of the usual windows the board allows, when the viewer asks for none. */
function defaultPeriod(maxRangeDays: number): Period {
  return maxRangeDays >= 30 ? 'last30d' : maxRangeDays >= 7 ? 'last7d' : 'today';
}

/** How long a board's computation is shared by its viewers (the feed memo). */
const BOARD_MEMO_MS = 15_000;

/**
 * A viewer may look back at most max_range_days from now and forward no further than the end of this
 * year (the latest end a board's own periods have); the window asked for is checked before the
 * org's retention clamps it, and refused, never narrowed. "Now" is the start of the memo period:
 * rolling windows (`last24h`, `all`) ended at this millisecond, so no two viewers shared a window and
 * a crowd on the board's own "Last 24 hours" ran one computation each (and met 503s).
 */
export function boardWindow(board: LiveBoard, q: Record<string, string>): ResolvedWindow {
  // Boards are drawn in the site's own timezone unless the viewer asks for another.
  const parsed = windowQuery.safeParse(q.tz === undefined ? { ...q, tz: board.site.timezone } : q);
  if (!parsed.success) throw formatZodError(parsed.error, 'query');
  const max = board.row.max_range_days;
  const tz = parsed.data.tz;
  const now = Math.floor(nowMs() / BOARD_MEMO_MS) * BOARD_MEMO_MS;
  const earliest = lookBackStart(now, max, tz);
  const span = windowSpan(parsed.data, defaultPeriod(max), now, earliest);
  if (span.from < earliest) {
    throw invalidRequest(`period/from: this board shows at most the last ${max} days (max_range_days)`, { max_range_days: max });
  }
  const latest = resolvePeriod('year', { now, tz, earliestDatum: null }).to;
  if (span.to > latest) throw invalidRequest(`to: this board shows nothing after the end of this year (${isoSecondsInZone(latest, tz)})`);
  return clampWindow(span, tz, now, board.retentionDays);
}

export default function sharePublic(router: Router, app: AppContext): void {
  const views = viewCounter(app.store);
  const cache = new FeedCache(BOARD_MEMO_MS);
  const gate = FeedGate.of(app);
  app.onShutdown.push(() => views.close());

  // Express 5 passes a rejected handler promise to the error handler itself.
  router.get('/share/:slug', async (req, res) => {
    const board = await liveBoard(app, String(req.params.slug));
    if (!board) return sendNotFoundPage(res, 'board');
    // A HEAD (link checkers, unfurlers, uptime probes) loads nothing: not a view.
    if (req.method === 'GET') views.count('share', board.row.slug);
    sendPage(res, `${board.row.label} · Tally`, 'board', { slug: board.row.slug }, ['charts.js', 'share.js']);
  });

  router.get('/share/:slug/data', (req, res) => sendFeed(res, async () => {
    const board = await liveBoard(app, String(req.params.slug));
    if (!board) throw notFound('board');
    const window = await spelledZone(app.store, boardWindow(board, singleValued(req.query)));
    const key = [JSON.stringify(board.row), window.fromMs, window.toMs, window.tz].join('|');
    return gate.serve(cache, key, req.ip, () => boardData(app, board, panelsOf(board.row), window, runReport));
  }));
}
