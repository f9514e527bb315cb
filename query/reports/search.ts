import { lowerSearchTermPages, lowerSearchTerms, lowerSearchTotals, searchConnection, searchDates, type SearchDates } from '../lower/search';
import type { SelectNode } from '../sql/ast';
import type { ReportQuery } from '../ast';
import type { Exec } from '../execute';
import { numbers, pagedMeta, pageRows, rangeMeta, type ReportRunner, type Row } from './shared';

/** clicks / impressions as a fraction (4 decimals); position impression-weighted (2 decimals). */
const ratios = (n: Record<string, number>) => ({
  ctr: n.impressions > 0 ? Math.round((n.clicks / n.impressions) * 10_000) / 10_000 : 0,
  position: n.impressions > 0 ? Math.round((n.position_sum / n.impressions) * 100) / 100 : 0,
});

/**
 * The window's rows, or none when the window covers no date or the site has no search-console
 * connection, and whether the window reaches days that may still grow. Both are asked at once: the
 * connection check adds no round trip.
 */
async function searchRows(q: ReportQuery, exec: Exec, lower: (q: ReportQuery, d: SearchDates) => SelectNode): Promise<{ rows: Row[]; growing: boolean }> {
  const dates = searchDates(q);
  if (!dates) return { rows: [], growing: false };
  const [link, rows] = await Promise.all([exec<Row>(searchConnection(q)), exec<Row>(lower(q, dates))]);
  if (!numbers(link[0]).connections) return { rows: [], growing: false };
  const from = String(link[0].growing_from ?? '');
  return { rows, growing: from !== '' && dates.last >= from };
}

/**
 * null (status 200) when the site has no connection or the window no impressions: the two are not told
 * apart. `partial`: a day in the window holds rows not yet final, or the window reaches the days the
 * console still collects (a quiet property's recent days have no rows yet and will still grow).
 */
export const runSearchTotals: ReportRunner = async (q, exec) => {
  const { rows, growing } = await searchRows(q, exec, lowerSearchTotals);
  const n = numbers(rows[0]);
  const data = n.impressions > 0 ? { clicks: n.clicks, impressions: n.impressions, ...ratios(n), partial: n.not_final > 0 || growing } : null;
  return { data, meta: { range: rangeMeta(q) } };
};

export const runSearchTerms: ReportRunner = async (q, exec) => {
  const { rows } = await searchRows(q, exec, lowerSearchTerms);
  const data = pageRows(q, rows, (r, n) => {
    const pages = (r.pages as [string, string, number | string][]).map(([hostname, path, clicks]) => ({ hostname, path, clicks: Number(clicks) }));
    return { term: String(r.term), clicks: n.clicks, impressions: n.impressions, ...ratios(n), pages };
  });
  return { data, meta: pagedMeta(q, rows.length) };
};

export const runSearchTermPages: ReportRunner = async (q, exec) => {
  const { rows } = await searchRows(q, exec, lowerSearchTermPages);
  const data = pageRows(q, rows, (r, n) => ({ term: String(r.term), hostname: String(r.hostname), path: String(r.path), clicks: n.clicks, impressions: n.impressions }));
  return { data, meta: pagedMeta(q, rows.length) };
};
