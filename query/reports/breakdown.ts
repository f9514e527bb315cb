import { lowerBreakdown, type BreakdownStatements } from '../lower/breakdown';
import { paymentTotals } from '../lower/parts';
import type { ReportQuery } from '../ast';
import type { Exec } from '../execute';
import { DIMENSIONS, type DimensionDef } from '../registry/dimensions';
import { numbers, rangeMeta, type ReportResult, type ReportRunner, type Row } from './shared';

const keyOf = (r: Row, extras: readonly string[]) => JSON.stringify([r.label, ...extras.map((e) => r[e])]);

/** Ranked, paged rows; fields a dimension does not carry are absent, never null. */
export const runBreakdown: ReportRunner = (q, exec) => runGrouping(q, exec, DIMENSIONS[q.dimension!]);

/** A breakdown over any grouping (a dimension, or a report's own such as AI assistants). */
export async function runGrouping(q: ReportQuery, exec: Exec, def: DimensionDef): Promise<ReportResult> {
  const s = lowerBreakdown(q, def);
  const { limit, offset } = q.paging!;
  const none = Promise.resolve([] as Row[]);
  // Goal figures and the window's payment total do not depend on the ranking: one round trip for all three.
  const [ranked, goals, paid] = await Promise.all([
    exec<Row>(s.ranking), s.goals ? exec<Row>(s.goals) : none, s.revenue ? exec<Row>(paymentTotals(q)) : none,
  ]);
  const paying = numbers(paid[0]).payments > 0;
  const rankedOnPage = ranked.slice(0, limit);
  // Attribution joins sessions and is narrowed to the page's labels; a window without payments skips
  // it, and the revenue-only rows that may follow them.
  const [revenue, tail] = await Promise.all([
    s.revenue && rankedOnPage.length && paying ? exec<Row>(s.revenue(rankedOnPage.map((r) => String(r.label)))) : none,
    paying ? revenueOnlyRows(q, exec, s, ranked.length) : none,
  ]);
  const page = [...rankedOnPage, ...tail].slice(0, limit);
  const extra = new Map<string, Record<string, number>>();
  for (const r of [...goals, ...revenue]) extra.set(keyOf(r, s.extras), { ...extra.get(keyOf(r, s.extras)), ...numbers(r) });
  const data = page.map((r) => {
    const more = extra.get(keyOf(r, s.extras)) ?? {};
    const figures = { ...numbers(r), ...more };
    const row: Record<string, unknown> = { label: String(r.label) };
    for (const e of s.extras) row[e] = String(r[e]);
    for (const f of s.fields) row[f] = figures[f] ?? 0;
    return row;
  });
  return { data, meta: { page: { limit, offset, has_more: ranked.length + tail.length > limit }, range: rangeMeta(q) } };
}

/**
 * The revenue-only rows this page reaches (BreakdownStatements.revenueOnly), one more than fit to
 * measure has_more. They follow the last ranked row: when the page holds ranked rows they start
 * right after them; on a page past the ranked rows, after however many there are.
 */
async function revenueOnlyRows(q: ReportQuery, exec: Exec, s: BreakdownStatements, rankedHere: number): Promise<Row[]> {
  const { limit, offset } = q.paging!;
  if (!s.revenueOnly || rankedHere > limit) return [];
  if (rankedHere > 0) return exec<Row>(s.revenueOnly.rows(0, limit - rankedHere + 1));
  const rankedBefore = offset === 0 ? 0 : numbers((await exec<Row>(s.revenueOnly.rankedCount))[0]).ranked;
  return offset < rankedBefore ? [] : exec<Row>(s.revenueOnly.rows(offset - rankedBefore, limit + 1));
}
