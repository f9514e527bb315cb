import { fn, str, type Expr } from '../sql/ast';
import { addMonths, fromWallMs, wallMs, type LocalDateTime } from '../window/zoned';

/**
 * Time buckets: one entry per `unit` holding every fact about it: how to floor and step a local
 * wall-clock time (TypeScript makes the gap-filled labels), the SQL that labels a timestamp with its
 * bucket (the only place `toTimeZone` appears), and whether the 15-minute rollup can serve it.
 */
export const BUCKET_UNITS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type BucketUnit = (typeof BUCKET_UNITS)[number];

export interface BucketDef {
  /** Bucket start of a wall-clock time (milliseconds of the wall time read as UTC). */
  floor(wall: number): number;
  /** The next bucket start after `wall` (a bucket start). */
  next(wall: number): number;
  /** SQL: the label (LABEL_FORMAT, wall clock in `tz`) of the bucket holding the UTC timestamp `ts`. */
  label(ts: Expr, tz: Expr): Expr;
  /** Boundaries fall on whole local days, so a DST gap can never swallow a label. */
  calendar: boolean;
  /** Every boundary is a multiple of 15 minutes in UTC, so quarter-hour rollups can answer. */
  quarterAligned: boolean;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const local = (ms: number): LocalDateTime => fromWallMs(ms);

/** Label format shared by SQL (formatDateTime) and TypeScript (formatLocal). */
export const LABEL_FORMAT = '%Y-%m-%d %H:%i:%S';
/** The bucket start `start` (a Date or DateTime in tz) as a label. */
const labelOf = (start: Expr) => fn('formatDateTime', start, str(LABEL_FORMAT));
/**
 * The wall clock in tz with its smaller fields written as zeros. TRAP: not toStartOfHour, which on
 * the days Australia/Lord_Howe shifts by 30 minutes floors to :30 (03:10 becomes 02:30), so its
 * rows matched no planned label and the rest of the day read 0.
 */
const truncated = (ts: Expr, tz: Expr, format: string) => fn('formatDateTime', fn('toTimeZone', ts, tz), str(format));

export const BUCKETS = {
  minute: {
    floor: (w) => Math.floor(w / MIN) * MIN,
    next: (w) => w + MIN,
    label: (ts, tz) => truncated(ts, tz, '%Y-%m-%d %H:%i:00'),
    calendar: false,
    quarterAligned: false,
  },
  hour: {
    floor: (w) => Math.floor(w / HOUR) * HOUR,
    next: (w) => w + HOUR,
    label: (ts, tz) => truncated(ts, tz, '%Y-%m-%d %H:00:00'),
    calendar: false,
    quarterAligned: true,
  },
  day: {
    floor: (w) => Math.floor(w / DAY) * DAY,
    next: (w) => w + DAY,
    label: (ts, tz) => labelOf(fn('toDate', fn('toTimeZone', ts, tz))),
    calendar: true,
    quarterAligned: true,
  },
  week: {
    // 1970-01-01 was a Thursday: shift so weeks start on Monday.
    floor: (w) => Math.floor((w + 3 * DAY) / (7 * DAY)) * 7 * DAY - 3 * DAY,
    next: (w) => w + 7 * DAY,
    label: (ts, tz) => labelOf(fn('toMonday', fn('toTimeZone', ts, tz))),
    calendar: true,
    quarterAligned: true,
  },
  month: {
    floor: (w) => wallMs({ ...local(w), day: 1, hour: 0, minute: 0, second: 0 }),
    next: (w) => wallMs(addMonths(local(w), 1)),
    label: (ts, tz) => labelOf(fn('toStartOfMonth', fn('toTimeZone', ts, tz))),
    calendar: true,
    quarterAligned: true,
  },
} satisfies Record<BucketUnit, BucketDef>;
