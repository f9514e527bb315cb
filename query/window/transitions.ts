import { offsetMs } from './zoned';

/**
 * UTC offset changes of a zone inside a span, found by sampling the offset weekly and bisecting to
 * the second where it changes. Used to drop wall-clock labels that do not exist (spring-forward gaps)
 * without asking Intl about every bucket (Intl costs ~6 µs a call; a 10,000-bucket series would
 * otherwise spend most of its time here).
 */
export interface Transition {
  at: number;
  before: number;
  after: number;
}

const WEEK_MS = 7 * 86_400_000;

function transitions(from: number, to: number, tz: string): Transition[] {
  const out: Transition[] = [];
  let t = from;
  let off = offsetMs(t, tz);
  while (t < to) {
    const next = Math.min(t + WEEK_MS, to);
    const nextOff = offsetMs(next, tz);
    if (nextOff !== off) out.push({ at: bisect(t, next, off, tz), before: off, after: nextOff });
    t = next;
    off = nextOff;
  }
  return out;
}

/**
 * First second in (lo, hi] whose offset differs from `off`. Bisected on whole epoch seconds (where
 * every transition is): on the grid of a `from` with milliseconds the change was found 0.345 s late,
 * and the spring-forward gap then began at 02:00:00.345, so the skipped 02:00 got a row.
 */
function bisect(lo: number, hi: number, off: number, tz: string): number {
  lo = Math.floor(lo / 1000) * 1000;
  hi = Math.ceil(hi / 1000) * 1000;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetMs(mid, tz) === off) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The wall-clock time a span covers, as half-open ranges: one per stretch of constant offset. A
 * spring-forward leaves a hole between two ranges; a fall-back makes them overlap (the repeated
 * hour), and the latest wall time reached may lie before the span's end in wall time. A span ending
 * at the start of a day that begins at 01:00 (Santiago, Beirut) reaches that day's 00:00 exclusive.
 */
export function wallRanges(from: number, to: number, tz: string): { start: number; end: number }[] {
  const ranges: { start: number; end: number }[] = [];
  let start = from;
  let off = offsetMs(from, tz);
  for (const x of transitions(from, to, tz)) {
    if (x.at > start) ranges.push({ start: start + off, end: x.at + off });
    start = x.at;
    off = x.after;
  }
  if (to > start) ranges.push({ start: start + off, end: to + off });
  return ranges;
}
