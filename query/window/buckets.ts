import { BUCKETS, type BucketUnit } from '../registry/buckets';
import { wallRanges } from './transitions';
import { formatLocal, fromWallMs } from './zoned';
import type { Span } from './resolve';
import { DAY_MS } from '../../core/time';

/**
 * The gap-filled bucket labels of a window, made in TypeScript on wall-clock time: every bucket whose
 * wall-clock interval meets the wall time the window covers (wallRanges). So a partial first bucket
 * keeps its boundary label, a label repeated by a DST fall-back appears once (its bucket holds both
 * passes), a label skipped by a spring-forward gap does not appear, and a window ending inside a
 * repeated hour still has the first pass's later labels. Returns null when there would be more than
 * `max` buckets.
 */
export function bucketLabels(unit: BucketUnit, span: Span, tz: string, max: number): string[] | null {
  // An empty window (one wholly before retention, clamped to [cutoff, cutoff)) has no bucket.
  if (span.to <= span.from) return [];
  const def = BUCKETS[unit];
  // Clearly too many fixed-length buckets is refused before the zone's transitions are looked up (a
  // weekly Intl probe over the window: milliseconds for years); DST moves the wall span by at most a day.
  if (!def.calendar) {
    const step = def.next(0);
    if ((span.to - span.from - DAY_MS) / step > max + 2) return null;
  }
  const covered = wallRanges(span.from, span.to, tz);
  const first = def.floor(Math.min(...covered.map((r) => r.start)));
  const end = Math.max(...covered.map((r) => r.end));
  if (!def.calendar && (end - first) / (def.next(first) - first) > max + 2) return null;
  const labels: string[] = [];
  for (let w = first; w < end; w = def.next(w)) {
    const next = def.next(w);
    if (!covered.some((r) => w < r.end && next > r.start)) continue;
    labels.push(formatLocal(fromWallMs(w)));
    if (labels.length > max) return null;
  }
  return labels;
}
