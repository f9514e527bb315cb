/**
 * Wall-clock arithmetic in an IANA zone with nothing but Intl. Calendar math (days, months) happens
 * on local dates; a local date-time becomes an instant only through `localToUtc`, which resolves DST
 * gaps and overlaps the way Temporal's 'compatible' mode does (a skipped time moves forward, a
 * repeated time takes its first occurrence). That is what keeps windows right on DST days.
 */
import { DAY_MS } from '../../core/time';

export interface LocalDateTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export interface ZonedParts extends LocalDateTime {
  /** ISO day of week: 1 = Monday ... 7 = Sunday. */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric',
      hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short', era: 'short',
    });
    formatters.set(tz, f);
  }
  return f;
}

export function zonedParts(ms: number, tz: string): ZonedParts {
  const parts: Record<string, string> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms))) parts[p.type] = p.value;
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
  return {
    year, month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour),
    minute: Number(parts.minute), second: Number(parts.second), weekday: WEEKDAYS[parts.weekday],
  };
}

/** The wall-clock fields read as if they were UTC (a zone-free number to do arithmetic on). */
export function wallMs(l: LocalDateTime): number {
  const d = new Date(0);
  d.setUTCFullYear(l.year, l.month - 1, l.day);
  d.setUTCHours(l.hour, l.minute, l.second, 0);
  return d.getTime();
}

export function fromWallMs(ms: number): LocalDateTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(),
    hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(),
  };
}

/** Offset of `tz` from UTC at the instant `ms`, in milliseconds (east positive). */
export function offsetMs(ms: number, tz: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallMs(zonedParts(whole, tz)) - whole;
}

/** The instant a local date-time names in `tz` (gaps move forward, overlaps take the earlier instant). */
export function localToUtc(l: LocalDateTime, tz: string): number {
  const wall = wallMs(l);
  const before = offsetMs(wall - DAY_MS, tz);
  const after = offsetMs(wall + DAY_MS, tz);
  const candidates = [...new Set([wall - before, wall - after])]
    .filter((t) => wallMs(zonedParts(t, tz)) === wall)
    .sort((a, b) => a - b);
  if (candidates.length) return candidates[0];
  // In a gap: read the wall time with the offset in force before the jump, which lands after it.
  return wall - before;
}

export function addDays(l: LocalDateTime, days: number): LocalDateTime {
  return fromWallMs(wallMs({ ...l, hour: 0, minute: 0, second: 0 }) + days * DAY_MS);
}

export function addMonths(l: LocalDateTime, months: number): LocalDateTime {
  const index = l.year * 12 + (l.month - 1) + months;
  return { year: Math.floor(index / 12), month: (index % 12 + 12) % 12 + 1, day: 1, hour: 0, minute: 0, second: 0 };
}

export const startOfDay = (l: LocalDateTime): LocalDateTime => ({ ...l, hour: 0, minute: 0, second: 0 });
export const startOfMonth = (l: LocalDateTime): LocalDateTime => ({ ...startOfDay(l), day: 1 });
export const startOfYear = (l: LocalDateTime): LocalDateTime => ({ ...startOfMonth(l), month: 1 });

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD HH:MM:SS`, the bucket label format. */
export function formatLocal(l: LocalDateTime): string {
  return `${pad(l.year, 4)}-${pad(l.month)}-${pad(l.day)} ${pad(l.hour)}:${pad(l.minute)}:${pad(l.second)}`;
}

/** `YYYY-MM-DD`, a calendar date. */
export const formatDate = (l: LocalDateTime): string => formatLocal(l).slice(0, 10);

/** `YYYY-MM-DD` as that date's local midnight. */
export function parseDate(date: string): LocalDateTime {
  const [year, month, day] = date.split('-').map(Number);
  return { year, month, day, hour: 0, minute: 0, second: 0 };
}

/** The calendar date in `tz` at instant `ms`. */
export const dateInZone = (ms: number, tz: string): string => formatDate(zonedParts(ms, tz));

/**
 * ISO 8601 with the zone's offset at that instant: 2026-10-25T00:00:00+02:00 (milliseconds only when
 * set). An offset that is not whole minutes (Africa/Monrovia kept -00:44:30 until 1972) has no ISO
 * 8601 / RFC 3339 spelling (it printed -00:44.5), so that instant is written in UTC, `Z`.
 */
export function isoInZone(ms: number, tz: string): string {
  const zoned = offsetMs(ms, tz);
  const off = zoned % 60_000 === 0 ? zoned : 0;
  const l = fromWallMs(ms + off);
  const frac = ms % 1000 === 0 ? '' : `.${pad(((ms % 1000) + 1000) % 1000, 3)}`;
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off) / 60_000;
  const offset = zoned === off ? `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}` : 'Z';
  return `${formatLocal(l).replace(' ', 'T')}${frac}${offset}`;
}
