import { DAY_MS, HOUR_MS } from '../../core/time';
import {
  addDays, addMonths, fromWallMs, localToUtc, startOfDay, startOfMonth, startOfYear, wallMs, zonedParts,
  type LocalDateTime,
} from './zoned';

/**
 * Turning what the caller asked (`period`, or `from`/`to`) into a UTC half-open window `[from, to)`.
 * Periods are resolved on the local calendar in `tz` and only then converted to instants, so a day
 * is 23 or 25 hours long when DST says so (PRODUCT.md §4).
 */

export const PERIODS = ['today', 'yesterday', 'last24h', 'last7d', 'last30d', 'last12m', 'month', 'year', 'all'] as const;
export type Period = (typeof PERIODS)[number];

export type WindowRequest =
  | { kind: 'period'; period: Period }
  | { kind: 'range'; from: number; to: number }
  | { kind: 'lookback'; minutes: number };

export interface Span {
  from: number;
  to: number;
}

export interface PeriodContext {
  now: number;
  tz: string;
  /** The site's earliest datum (event, payment or search day; query/context earliestDatum), or null when it has none: `all` starts there (today's midnight for null). */
  earliestDatum: number | null;
}

type PeriodRule = (today: LocalDateTime, c: PeriodContext) => Span;

const at = (l: LocalDateTime, tz: string) => localToUtc(l, tz);

/** One rule per period; periods that include today end at the end of their current calendar unit. */
const PERIOD_RULES: Record<Period, PeriodRule> = {
  today: (d, c) => ({ from: at(d, c.tz), to: at(addDays(d, 1), c.tz) }),
  yesterday: (d, c) => ({ from: at(addDays(d, -1), c.tz), to: at(d, c.tz) }),
  last24h: (_d, c) => ({ from: c.now - 24 * HOUR_MS, to: c.now }),
  last7d: (d, c) => ({ from: at(addDays(d, -6), c.tz), to: at(addDays(d, 1), c.tz) }),
  last30d: (d, c) => ({ from: at(addDays(d, -29), c.tz), to: at(addDays(d, 1), c.tz) }),
  last12m: (d, c) => ({ from: at(addMonths(startOfMonth(d), -11), c.tz), to: at(addMonths(startOfMonth(d), 1), c.tz) }),
  month: (d, c) => ({ from: at(startOfMonth(d), c.tz), to: at(addMonths(startOfMonth(d), 1), c.tz) }),
  year: (d, c) => ({ from: at(startOfYear(d), c.tz), to: at(addMonths(startOfYear(d), 12), c.tz) }),
  all: (d, c) => ({ from: Math.min(c.earliestDatum ?? at(d, c.tz), c.now), to: c.now }),
};

export function resolvePeriod(period: Period, c: PeriodContext): Span {
  const today = startOfDay(zonedParts(c.now, c.tz));
  return PERIOD_RULES[period](today, c);
}

export function resolveWindow(w: WindowRequest, c: PeriodContext): Span {
  switch (w.kind) {
    case 'period':
      return resolvePeriod(w.period, c);
    case 'range':
      return { from: w.from, to: w.to };
    case 'lookback':
      // Inclusive of now: an event stamped this very millisecond is live. +1 makes [from, to) hold it.
      return { from: c.now - w.minutes * 60_000, to: c.now + 1 };
  }
}

export interface Clamp extends Span {
  clamped: boolean;
}

/** Windows reaching before `now - retentionDays` start at that cutoff instead, flagged `clamped`. */
export function clampToRetention(span: Span, now: number, retentionDays: number): Clamp {
  const cutoff = now - retentionDays * 24 * HOUR_MS;
  if (span.from >= cutoff) return { ...span, clamped: false };
  return { from: cutoff, to: Math.max(span.to, cutoff), clamped: true };
}

/**
 * `from` plus whole calendar units in `tz` (day clamped to the month's length), as an instant. The
 * wall clock holds whole seconds, so `from`'s milliseconds are added back (zone offsets are whole
 * seconds): without them a window of exactly 3 months starting at .281 s ended after its limit and
 * was bucketed by week instead of by day.
 */
export function addCalendar(from: number, tz: string, unit: 'day' | 'month', n: number): number {
  const l = zonedParts(from, tz);
  const millis = ((from % 1000) + 1000) % 1000;
  if (unit === 'day') {
    const shifted = fromWallMs(wallMs(l) + n * 24 * HOUR_MS);
    return localToUtc(shifted, tz) + millis;
  }
  const first = addMonths(l, n);
  const last = new Date(Date.UTC(first.year, first.month, 0)).getUTCDate();
  return localToUtc({ ...l, year: first.year, month: first.month, day: Math.min(l.day, last) }, tz) + millis;
}

/**
 * Where "the last N days" begins (a share board's max_range_days): N x 24 hours ago, or midnight
 * N - 1 local days ago when that is earlier. After a fall-back the calendar's last 30 days (last30d)
 * are an hour longer than 720 hours, and a board's own default window was refused from 23:00 to
 * midnight for 29 days.
 */
export function lookBackStart(now: number, days: number, tz: string): number {
  const calendar = localToUtc(addDays(startOfDay(zonedParts(now, tz)), -(days - 1)), tz);
  return Math.min(now - days * DAY_MS, calendar);
}
