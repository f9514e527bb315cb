import { BUCKETS, type BucketUnit } from '../registry/buckets';
import { gaps } from './transitions';
import { formatLocal, fromWallMs, offsetMs } from './zoned';
import type { Span } from './resolve';

/**
 * The gap-filled bucket labels of a window, made in TypeScript on wall-clock time: a partial first
 * bucket keeps its boundary label, a label repeated by a DST fall-back appears once (its bucket holds
 * both hours), a label skipped by a spring-forward gap does not appear. Returns null when there would
 * be more than `max` buckets.
 */
export function bucketLabels(unit: BucketUnit, span: Span, tz: string, max: number): string[] | null {
  // An empty window (one wholly before retention, clamped to [cutoff, cutoff)) has no bucket.
  if (span.to <= span.from) return [];
  const def = BUCKETS[unit];
  const fromWall = span.from + offsetMs(span.from, tz);
  const toWall = span.to + offsetMs(span.to, tz);
  const first = def.floor(fromWall);
  if (!def.calendar && (toWall - first) / (def.next(first) - first) > max + 2) return null;
  const holes = def.calendar ? [] : gaps(span.from, span.to, tz);
  const labels: string[] = [];
  // A window inside a repeated (fall-back) hour ends at an earlier wall time than it starts at.
  const end = Math.max(toWall, def.next(first));
  for (let w = first; w < end; w = def.next(w)) {
    const next = def.next(w);
    if (holes.some((g) => g.start <= w && next <= g.end)) continue;
    labels.push(formatLocal(fromWallMs(w)));
    if (labels.length > max) return null;
  }
  return labels;
}
