import { lowerBreakdown } from '../lower/breakdown';
import { paymentTotals } from '../lower/parts';
import { numbers, rangeMeta, type ReportRunner, type Row } from './shared';

const keyOf = (r: Row, extras: readonly string[]) => JSON.stringify([r.label, ...extras.map((e) => r[e])]);

/** Ranked, paged rows; fields a dimension does not carry are absent, never null. */
export const runBreakdown: ReportRunner = async (q, exec) => {
  const s = lowerBreakdown(q);
  const { limit, offset } = q.paging!;
  const ranked = await exec<Row>(s.ranking);
  const page = ranked.slice(0, limit);
  const labels = page.map((r) => String(r.label));
  const [goals, revenue] = await Promise.all([
    s.goals && page.length ? exec<Row>(s.goals) : Promise.resolve([] as Row[]),
    s.revenue && page.length ? revenueRows(q, exec, () => s.revenue!(labels)) : Promise.resolve([] as Row[]),
  ]);
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
  return { data, meta: { page: { limit, offset, has_more: ranked.length > limit }, range: rangeMeta(q) } };
};

/** Attribution joins sessions; a window without payments skips it. */
async function revenueRows(q: Parameters<ReportRunner>[0], exec: Parameters<ReportRunner>[1], statement: () => Parameters<typeof exec>[0]) {
  const [total] = await exec<Row>(paymentTotals(q));
  if (!numbers(total).payments) return [];
  return exec<Row>(statement());
}
