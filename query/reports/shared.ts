import type { ReportQuery } from '../ast';
import type { Exec } from '../execute';
import { METRICS, METRIC_KEYS, type MetricKey } from '../registry/metrics';
import { isoInZone } from '../window/zoned';

export interface ReportResult {
  data: unknown;
  meta: Record<string, unknown>;
}

export type ReportRunner = (q: ReportQuery, exec: Exec) => Promise<ReportResult>;

export type Row = Record<string, unknown>;

/** `meta.range`: the window actually covered, as ISO 8601 with the tz offset. */
export function rangeMeta(q: ReportQuery) {
  const r = q.range!;
  return { from: isoInZone(r.from, q.tz), to: isoInZone(r.to, q.tz), tz: q.tz, clamped: r.clamped };
}

/** `meta` of a paged report: `has_more` measured from the one extra row fetched. */
export function pagedMeta(q: ReportQuery, fetched: number) {
  const { limit, offset } = q.paging!;
  return { page: { limit, offset, has_more: fetched > limit }, range: rangeMeta(q) };
}

/** The page's rows (the extra row dropped), each shaped for the API. */
export function pageRows<T>(q: ReportQuery, rows: Row[], shape: (r: Row, n: Record<string, number>) => T): T[] {
  return rows.slice(0, q.paging!.limit).map((r) => shape(r, numbers(r)));
}

/** Figures as JSON numbers (64-bit counts arrive as numbers; a missing part counts as 0). */
export function numbers(row: Row | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(row ?? {})) {
    if (typeof v === 'number') out[k] = v;
    else if (typeof v === 'string' && v !== '' && !Number.isNaN(Number(v))) out[k] = Number(v);
  }
  return out;
}

/** Fill derived figures (registry `derive`) and pick the public fields in order, 0 for missing parts. */
export function figures(parts: Record<string, number>, fields: readonly MetricKey[]): Record<string, number> {
  const all: Record<string, number> = Object.fromEntries(METRIC_KEYS.map((k) => [k, 0]));
  Object.assign(all, parts);
  for (const k of fields) {
    const def = METRICS[k] as { derive?: (r: Record<string, number>) => number };
    if (def.derive) all[k] = def.derive(all);
  }
  const out: Record<string, number> = {};
  for (const k of fields) out[k] = Number.isFinite(all[k]) ? all[k] : 0;
  return out;
}
