import { z } from 'zod';
import { nowMs } from '../core/clock';
import { isValidTimeZone } from '../core/time';

/**
 * The spec's window parameters (period | from+to, tz, bots) resolved to a UTC half-open [from, to)
 * for the resource routes (notes, funnel report, share-board range checks). Semantics are those of
 * PRODUCT.md §4; the analytics reports resolve their own windows inside query/.
 */
export const PERIODS = ['today', 'yesterday', 'last24h', 'last7d', 'last30d', 'last12m', 'month', 'year', 'all'] as const;
export type Period = (typeof PERIODS)[number];

const isoWithOffset = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset' });

export const windowShape = {
  period: z.enum(PERIODS, { error: `must be one of ${PERIODS.join(', ')}` }).optional(),
  from: isoWithOffset.optional(),
  to: isoWithOffset.optional(),
  tz: z.string().refine(isValidTimeZone, 'must be an IANA timezone such as Europe/Berlin').default('UTC'),
  bots: z.enum(['excluded', 'included'], { error: 'must be excluded or included' }).default('excluded'),
};

/** Cross-field refusals: `period` with `from`/`to`, one bound without the other, an empty window. */
export function refineWindow(q: { period?: string; from?: string; to?: string }, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (q.period && (q.from || q.to)) issue('period', 'cannot be combined with from/to');
  else if (q.from && !q.to) issue('to', 'is required with from');
  else if (q.to && !q.from) issue('from', 'is required with to');
  else if (q.from && q.to && Date.parse(q.from) >= Date.parse(q.to)) issue('to', 'must be after from');
}

export const windowQuery = z.object(windowShape).superRefine(refineWindow);
export type WindowParams = { period?: Period; from?: string; to?: string; tz: string };

export interface ResolvedWindow {
  fromMs: number;
  toMs: number;
  tz: string;
  clamped: boolean;
}

const DAY = 86_400_000;

/** Wall-clock parts of an instant in a zone. */
export function zonedParts(ms: number, tz: string): { y: number; m: number; d: number; h: number; mi: number; s: number } {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  });
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]));
  return { y: p.year, m: p.month, d: p.day, h: p.hour, mi: p.minute, s: p.second };
}

/** Offset of a zone at an instant, in ms (positive east of UTC). */
export function zoneOffsetMs(ms: number, tz: string): number {
  const p = zonedParts(ms, tz);
  const asUtc = Date.UTC(p.y, p.m - 1, p.d, p.h, p.mi, p.s);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** The instant of local midnight starting calendar day y-m-d in tz (DST-safe: re-checks the offset). */
export function zonedMidnight(y: number, m: number, d: number, tz: string): number {
  const naive = Date.UTC(y, m - 1, d);
  let at = naive - zoneOffsetMs(naive, tz);
  at = naive - zoneOffsetMs(at, tz);
  return at;
}

/** ISO 8601 with the zone's offset at that instant: 2026-03-10T00:00:00-04:00. */
export function isoInZone(ms: number, tz: string): string {
  const p = zonedParts(ms, tz);
  const off = zoneOffsetMs(ms, tz) / 60_000;
  const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
  const sign = off < 0 ? '-' : '+';
  return `${pad(p.y, 4)}-${pad(p.m)}-${pad(p.d)}T${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}${sign}${pad(Math.trunc(off / 60))}:${pad(off % 60)}`;
}

/** `YYYY-MM-DD` of an instant in tz. */
export function localDate(ms: number, tz: string): string {
  const p = zonedParts(ms, tz);
  return `${String(p.y).padStart(4, '0')}-${String(p.m).padStart(2, '0')}-${String(p.d).padStart(2, '0')}`;
}

function periodBounds(period: Period, now: number, tz: string, allFrom: number): [number, number] {
  const t = zonedParts(now, tz);
  const day = (offset: number) => zonedMidnight(t.y, t.m, t.d + offset, tz);
  const month = (offset: number) => zonedMidnight(t.y, t.m + offset, 1, tz);
  switch (period) {
    case 'today': return [day(0), day(1)];
    case 'yesterday': return [day(-1), day(0)];
    case 'last24h': return [now - DAY, now];
    case 'last7d': return [day(-6), day(1)];
    case 'last30d': return [day(-29), day(1)];
    case 'last12m': return [month(-11), month(1)];
    case 'month': return [month(0), month(1)];
    case 'year': return [zonedMidnight(t.y, 1, 1, tz), zonedMidnight(t.y + 1, 1, 1, tz)];
    case 'all': return [Math.min(allFrom, now), now];
  }
}

/**
 * Resolve the window. `period=all` starts at `allFrom` (the caller decides: earliest retained event
 * or the retention cutoff). Windows reaching before `now - retentionDays` start at that cutoff with
 * `clamped: true`; a window wholly before it becomes empty at the cutoff.
 */
export function resolveWindow(p: WindowParams, fallback: Period, retentionDays: number, allFrom?: number): ResolvedWindow {
  const now = nowMs();
  const cutoff = now - retentionDays * DAY;
  let [fromMs, toMs] = p.from && p.to ? [Date.parse(p.from), Date.parse(p.to)] : periodBounds(p.period ?? fallback, now, p.tz, allFrom ?? cutoff);
  const clamped = fromMs < cutoff;
  if (clamped) {
    fromMs = cutoff;
    toMs = Math.max(toMs, cutoff);
  }
  return { fromMs, toMs, tz: p.tz, clamped };
}

export const rangeMeta = (w: ResolvedWindow) => ({
  from: isoInZone(w.fromMs, w.tz), to: isoInZone(w.toMs, w.tz), tz: w.tz, clamped: w.clamped,
});

export const hasWindow = (p: { period?: string; from?: string }) => !!(p.period || p.from);
