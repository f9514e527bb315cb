import { AI_BOT_KINDS } from '../../ingest/enrich/bots';
import { ASSISTANT, aiPagesRevenue, lowerAiCrawlers, lowerAiPages, lowerAiSeries } from '../lower/ai';
import { paymentTotals } from '../lower/parts';
import { isoInZone } from '../window/zoned';
import { runGrouping } from './breakdown';
import { numbers, pagedMeta, pageRows, rangeMeta, type ReportRunner, type Row } from './shared';

/** One row per planned bucket, zero-filled: `views` (every AI kind) and one column per kind. */
export const runAiSeries: ReportRunner = async (q, exec) => {
  const rows = await exec<Row>(lowerAiSeries(q));
  const byLabel = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const cell = byLabel.get(String(r.label)) ?? {};
    cell[String(r.kind)] = numbers(r).views ?? 0;
    byLabel.set(String(r.label), cell);
  }
  const data = q.buckets!.map((bucket) => {
    const cell = byLabel.get(bucket) ?? {};
    const kinds = Object.fromEntries(AI_BOT_KINDS.map((k) => [k, cell[k] ?? 0]));
    return { bucket, views: AI_BOT_KINDS.reduce((a, k) => a + kinds[k], 0), ...kinds };
  });
  return { data, meta: { range: rangeMeta(q) } };
};

export const runAiCrawlers: ReportRunner = async (q, exec) => {
  const rows = await exec<Row>(lowerAiCrawlers(q));
  const data = pageRows(q, rows, (r, n) => ({
    crawler: String(r.crawler), operator: String(r.operator), kind: String(r.kind), views: n.views ?? 0, pages: n.pages ?? 0,
    last_seen: isoInZone(n.last_seen_ms, q.tz),
  }));
  return { data, meta: pagedMeta(q, rows.length) };
};

export const runAiPages: ReportRunner = async (q, exec) => {
  const [rows, paid] = await Promise.all([exec<Row>(lowerAiPages(q)), exec<Row>(paymentTotals(q))]);
  const page = rows.slice(0, q.paging!.limit);
  const paths = page.map((r) => String(r.path));
  // Attribution joins sessions; a window without payments skips it.
  const revenue = paths.length && numbers(paid[0]).payments ? await exec<Row>(aiPagesRevenue(q, paths)) : [];
  const byPath = new Map(revenue.map((r) => [String(r.label), numbers(r).revenue_cents ?? 0]));
  const data = page.map((r) => {
    const n = numbers(r);
    const path = String(r.path);
    return { path, crawler_views: n.crawler_views ?? 0, ai_visitors: n.ai_visitors ?? 0, goals: n.goals ?? 0, revenue_cents: byPath.get(path) ?? 0 };
  });
  return { data, meta: pagedMeta(q, rows.length) };
};

/** Ranked like a breakdown; each row names the assistant. */
export const runAiReferrals: ReportRunner = async (q, exec) => {
  const result = await runGrouping(q, exec, ASSISTANT);
  const data = (result.data as Row[]).map(({ label, ...figures }) => ({ assistant: label, ...figures }));
  return { data, meta: result.meta };
};
