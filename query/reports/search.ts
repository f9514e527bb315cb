import { lowerSearchTermPages, lowerSearchTerms, lowerSearchTotals, searchConnection, searchDates } from '../lower/search';
import type { ReportQuery } from '../ast';
import type { Exec } from '../execute';
import { numbers, pagedMeta, pageRows, rangeMeta, type ReportRunner, type Row } from './shared';

/** clicks / impressions as a fraction (4 decimals); position impression-weighted (2 decimals). */
const ratios = (n: Record<string, number>) => ({
  ctr: n.impressions > 0 ? Math.round((n.clicks / n.impressions) * 10_000) / 10_000 : 0,
  position: n.impressions > 0 ? Math.round((n.position_sum / n.impressions) * 100) / 100 : 0,
});

const connected = async (q: ReportQuery, exec: Exec) => (numbers((await exec<Row>(searchConnection(q)))[0]).connections ?? 0) > 0;

/** null (status 200) when the site has no connection or the window no impressions: the two are not told apart. */
export const runSearchTotals: ReportRunner = async (q, exec) => {
  const dates = searchDates(q);
  const meta = { range: rangeMeta(q) };
  if (!dates || !(await connected(q, exec))) return { data: null, meta };
  const n = numbers((await exec<Row>(lowerSearchTotals(q, dates)))[0]);
  if (!(n.impressions > 0)) return { data: null, meta };
  return { data: { clicks: n.clicks, impressions: n.impressions, ...ratios(n), partial: n.not_final > 0 }, meta };
};

export const runSearchTerms: ReportRunner = async (q, exec) => {
  const dates = searchDates(q);
  if (!dates || !(await connected(q, exec))) return { data: [], meta: pagedMeta(q, 0) };
  const rows = await exec<Row>(lowerSearchTerms(q, dates));
  const data = pageRows(q, rows, (r, n) => {
    const pages = (r.pages as [string, string, number | string][]).map(([hostname, path, clicks]) => ({ hostname, path, clicks: Number(clicks) }));
    return { term: String(r.term), clicks: n.clicks, impressions: n.impressions, ...ratios(n), pages };
  });
  return { data, meta: pagedMeta(q, rows.length) };
};

export const runSearchTermPages: ReportRunner = async (q, exec) => {
  const dates = searchDates(q);
  if (!dates || !(await connected(q, exec))) return { data: [], meta: pagedMeta(q, 0) };
  const rows = await exec<Row>(lowerSearchTermPages(q, dates));
  const data = pageRows(q, rows, (r, n) => ({ term: String(r.term), hostname: String(r.hostname), path: String(r.path), clicks: n.clicks, impressions: n.impressions }));
  return { data, meta: pagedMeta(q, rows.length) };
};
