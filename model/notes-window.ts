import { z } from 'zod';
import { nowMs } from '../core/clock';
import { isValidTimeZone } from '../core/time';
import type { Store } from '../clickhouse/store';
import { siteZone } from '../query/context';
import { rangeOrder, windowBound, windowConflict } from '../query/params';
import { instantMs, unplussed } from '../core/instant';
import { clampToRetention, PERIODS, resolvePeriod, type Period, type Span } from '../query/window/resolve';
import { dateInZone, isoInZone, localToUtc, parseDate } from '../query/window/zoned';

/**
 * The spec's window parameters (period | from+to, tz, bots) resolved to a UTC half-open [from, to)
 * for the resource routes (notes, funnel report, share-board range checks). Semantics are those of
 * PRODUCT.md §4, computed by the same rules as the analytics reports' windows (query/window); this
 * module adds the query parameters' validation and the second-precision ISO format these routes use.
 */
export { PERIODS, type Period };

/**
 * `from`/`to` as the reports take them (query/params windowBound); kept with an unencoded `+` read as
 * the `+` it was, so instantMs reads the value later.
 */
const boundary = (name: 'from' | 'to') =>
  z.preprocess((v) => (typeof v === 'string' ? unplussed(v) : v), z.string()).superRefine((v, ctx) => {
    const ms = windowBound(name, v);
    if (typeof ms === 'string') ctx.addIssue({ code: 'custom', message: ms });
  });

export const windowShape = {
  period: z.enum(PERIODS, { error: `must be one of ${PERIODS.join(', ')}` }).optional(),
  from: boundary('from').optional(),
  to: boundary('to').optional(),
  // Refused in the reports' words (query/params parseTz and oneOf), so one parameter reads one way everywhere.
  tz: z.string().superRefine((v, ctx) => {
    if (!isValidTimeZone(v)) ctx.addIssue({ code: 'custom', message: `"${v.slice(0, 64)}" is not a known IANA timezone` });
  }).default('UTC'),
  bots: z.enum(['excluded', 'included'], { error: 'must be one of excluded, included' }).default('excluded'),
};

/** Cross-field refusals, in the reports' words: `period` with `from`/`to`, one bound alone, an empty window. */
export function refineWindow(q: { period?: string; from?: string; to?: string }, ctx: z.RefinementCtx): void {
  const refused = windowConflict(q) ?? rangeOfBounds(q);
  if (refused) ctx.addIssue({ code: 'custom', path: [refused.param], message: refused.message });
}

/** An empty or reversed range, judged only when both bounds read (`from=x&to=y` was also "from: must be before to"). */
function rangeOfBounds(q: { from?: string; to?: string }) {
  if (q.from === undefined || q.to === undefined) return null;
  const from = windowBound('from', q.from);
  const to = windowBound('to', q.to);
  return typeof from === 'number' && typeof to === 'number' ? rangeOrder(from, to) : null;
}

export const windowQuery = z.object(windowShape).superRefine(refineWindow);
export type WindowParams = { period?: Period; from?: string; to?: string; tz: string };

/**
 * The parameters with `tz` as ClickHouse spells it (`europe/paris` is `Europe/Paris`), or 400: the
 * schema checks zones with Intl, which ignores case, and ClickHouse refused the other spellings (500).
 */
export async function spelledZone<T extends { tz: string }>(store: Store, p: T): Promise<T> {
  return { ...p, tz: (await siteZone(store, p.tz, 'tz'))! };
}

export interface ResolvedWindow {
  fromMs: number;
  toMs: number;
  tz: string;
  clamped: boolean;
  /** The window asked for, before the retention clamp (a share board hands it to the reports, which clamp alike). */
  asked: Span;
  /** The instant the window was resolved at (a share board's is rounded to its memo period). */
  now: number;
}

/** ISO 8601 with the zone's offset at that instant, to the second: 2026-03-10T00:00:00-04:00. */
export const isoSecondsInZone = (ms: number, tz: string): string => isoInZone(Math.floor(ms / 1000) * 1000, tz);

/** The instant of local midnight starting calendar day y-m-d in tz (days past the month's end roll over). */
export const zonedMidnight = (y: number, m: number, d: number, tz: string): number =>
  localToUtc({ year: y, month: m, day: d, hour: 0, minute: 0, second: 0 }, tz);

/** `YYYY-MM-DD` of an instant in tz. */
export const localDate = dateInZone;

/** The instant a date note's day starts in tz (`occurred_date` is `YYYY-MM-DD`). */
export const dayStart = (date: string, tz: string): number => localToUtc(parseDate(date), tz);

/**
 * Resolve the window with the reports' own calendar rules (query/window). `period=all` starts at
 * `allFrom`, the earliest datum, or today's local midnight when there is none (null), as in the
 * analytics reports; callers read it only for `all`. Windows reaching before `now - retentionDays`
 * start at that cutoff with `clamped: true`; a window wholly before it becomes empty at the cutoff.
 */
export function resolveWindow(p: WindowParams, fallback: Period, retentionDays: number, allFrom: number | null = null): ResolvedWindow {
  const now = nowMs();
  return clampWindow(windowSpan(p, fallback, now, allFrom), p.tz, now, retentionDays);
}

/** The window the parameters name at `now`, before the retention clamp; `all` starts at `allFrom`. */
export const windowSpan = (p: WindowParams, fallback: Period, now: number, allFrom: number | null): Span =>
  p.from && p.to
    ? { from: instantMs(p.from), to: instantMs(p.to) }
    : resolvePeriod(p.period ?? fallback, { now, tz: p.tz, earliestDatum: allFrom });

/** The span clamped to retention, remembering what was asked. */
export function clampWindow(span: Span, tz: string, now: number, retentionDays: number): ResolvedWindow {
  const c = clampToRetention(span, now, retentionDays);
  return { fromMs: c.from, toMs: c.to, tz, clamped: c.clamped, asked: span, now };
}

export const rangeMeta = (w: ResolvedWindow) => ({
  from: isoSecondsInZone(w.fromMs, w.tz), to: isoSecondsInZone(w.toMs, w.tz), tz: w.tz, clamped: w.clamped,
});

export const hasWindow = (p: { period?: string; from?: string }) => !!(p.period || p.from);
