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

/** First second in (lo, hi] whose offset differs from `off`. */
function bisect(lo: number, hi: number, off: number, tz: string): number {
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetMs(mid, tz) === off) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Wall-clock intervals that never happen: `[at + before, at + after)` for each forward jump. */
export function gaps(from: number, to: number, tz: string): { start: number; end: number }[] {
  return transitions(from, to, tz)
    .filter((x) => x.after > x.before)
    .map((x) => ({ start: x.at + x.before, end: x.at + x.after }));
}
