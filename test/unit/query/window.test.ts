import { bucketLabels } from '../../../query/window/buckets';
import { clampToRetention, resolvePeriod, type Period } from '../../../query/window/resolve';
import { isoInZone, localToUtc, offsetMs, zonedParts } from '../../../query/window/zoned';

const ms = (iso: string) => Date.parse(iso);
const range = (period: Period, now: string, tz: string, earliest: string | null = null) => {
  const s = resolvePeriod(period, { now: ms(now), tz, earliestDatum: earliest ? ms(earliest) : null });
  return { from: isoInZone(s.from, tz), to: isoInZone(s.to, tz), hours: (s.to - s.from) / 3_600_000 };
};

describe('zoned time', () => {
  test('offsets, including half-hour zones', () => {
    expect(offsetMs(ms('2026-01-15T12:00:00Z'), 'Europe/Paris')).toBe(3_600_000);
    expect(offsetMs(ms('2026-07-15T12:00:00Z'), 'Europe/Paris')).toBe(7_200_000);
    expect(offsetMs(ms('2026-07-15T12:00:00Z'), 'Asia/Kolkata')).toBe(5.5 * 3_600_000);
    expect(offsetMs(ms('2026-07-15T12:00:00Z'), 'America/New_York')).toBe(-4 * 3_600_000);
  });

  test('a local time skipped by spring-forward moves forward; a repeated one takes its first occurrence', () => {
    // Paris 2026-03-29: 02:00 → 03:00. 02:30 does not exist.
    expect(new Date(localToUtc({ year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0 }, 'Europe/Paris')).toISOString())
      .toBe('2026-03-29T01:30:00.000Z');
    // Paris 2026-10-25: 03:00 → 02:00. 02:30 happens twice (00:30Z and 01:30Z).
    expect(new Date(localToUtc({ year: 2026, month: 10, day: 25, hour: 2, minute: 30, second: 0 }, 'Europe/Paris')).toISOString())
      .toBe('2026-10-25T00:30:00.000Z');
  });

  test('weekday is ISO (Monday 1 ... Sunday 7)', () => {
    expect(zonedParts(ms('2026-10-25T12:00:00Z'), 'UTC').weekday).toBe(7);
    expect(zonedParts(ms('2026-10-26T12:00:00Z'), 'UTC').weekday).toBe(1);
  });

  test('ISO strings carry the zone offset', () => {
    expect(isoInZone(ms('2026-10-24T22:00:00Z'), 'Europe/Paris')).toBe('2026-10-25T00:00:00+02:00');
    expect(isoInZone(ms('2026-10-25T23:00:00Z'), 'Europe/Paris')).toBe('2026-10-26T00:00:00+01:00');
    expect(isoInZone(ms('2026-01-01T00:00:00.250Z'), 'UTC')).toBe('2026-01-01T00:00:00.250+00:00');
    expect(isoInZone(ms('2026-01-01T00:00:00Z'), 'America/New_York')).toBe('2025-12-31T19:00:00-05:00');
  });

  test('an offset of whole minutes before 1980 keeps its spelling; one with seconds is written in UTC', () => {
    expect(isoInZone(ms('1975-01-01T00:00:00Z'), 'Pacific/Kiritimati')).toBe('1974-12-31T13:20:00-10:40');
    expect(offsetMs(ms('1971-01-01T00:00:00Z'), 'Africa/Monrovia')).toBe(-(44 * 60 + 30) * 1000);
    expect(isoInZone(ms('1971-01-01T00:00:00Z'), 'Africa/Monrovia')).toBe('1971-01-01T00:00:00Z');
    expect(isoInZone(ms('1973-01-01T00:00:00Z'), 'Africa/Monrovia')).toBe('1973-01-01T00:00:00+00:00');
  });
});

describe('periods resolve on the local calendar', () => {
  test.each([
    ['today on the Paris fall-back day is 25 hours', 'today', '2026-10-25T12:00:00Z', 'Europe/Paris', '2026-10-25T00:00:00+02:00', '2026-10-26T00:00:00+01:00', 25],
    ['today on the New York fall-back day is 25 hours', 'today', '2026-11-01T15:00:00Z', 'America/New_York', '2026-11-01T00:00:00-04:00', '2026-11-02T00:00:00-05:00', 25],
    ['today on the Paris spring-forward day is 23 hours', 'today', '2026-03-29T12:00:00Z', 'Europe/Paris', '2026-03-29T00:00:00+01:00', '2026-03-30T00:00:00+02:00', 23],
    ['yesterday across the fall-back', 'yesterday', '2026-10-26T08:00:00Z', 'Europe/Paris', '2026-10-25T00:00:00+02:00', '2026-10-26T00:00:00+01:00', 25],
    ['today in Kolkata starts at 18:30 UTC', 'today', '2026-05-10T20:00:00Z', 'Asia/Kolkata', '2026-05-11T00:00:00+05:30', '2026-05-12T00:00:00+05:30', 24],
    ['last24h is rolling and ends now', 'last24h', '2026-05-10T20:15:00Z', 'Asia/Kolkata', '2026-05-10T01:45:00+05:30', '2026-05-11T01:45:00+05:30', 24],
    ['last7d is 7 calendar days including today', 'last7d', '2026-05-10T12:00:00Z', 'UTC', '2026-05-04T00:00:00+00:00', '2026-05-11T00:00:00+00:00', 168],
    ['last30d is 30 calendar days including today', 'last30d', '2026-05-10T12:00:00Z', 'UTC', '2026-04-11T00:00:00+00:00', '2026-05-11T00:00:00+00:00', 720],
    ['last12m is 12 calendar months including this one', 'last12m', '2026-05-10T12:00:00Z', 'UTC', '2025-06-01T00:00:00+00:00', '2026-06-01T00:00:00+00:00', 8760],
    ['month', 'month', '2026-02-10T12:00:00Z', 'UTC', '2026-02-01T00:00:00+00:00', '2026-03-01T00:00:00+00:00', 672],
    ['year', 'year', '2026-02-10T12:00:00Z', 'America/New_York', '2026-01-01T00:00:00-05:00', '2027-01-01T00:00:00-05:00', 8760],
  ] as const)('%s', (_n, period, now, tz, from, to, hours) => {
    expect(range(period, now, tz)).toEqual({ from, to, hours });
  });

  test('all starts at the earliest event and ends now; with no event it starts today', () => {
    expect(range('all', '2026-05-10T12:00:00Z', 'UTC', '2026-01-02T03:04:05Z')).toMatchObject({ from: '2026-01-02T03:04:05+00:00', to: '2026-05-10T12:00:00+00:00' });
    expect(range('all', '2026-05-10T12:00:00Z', 'UTC')).toMatchObject({ from: '2026-05-10T00:00:00+00:00', to: '2026-05-10T12:00:00+00:00' });
  });

  test('retention clamps the start and flags it', () => {
    const now = ms('2026-05-10T12:00:00Z');
    expect(clampToRetention({ from: ms('2026-05-01T00:00:00Z'), to: now }, now, 30)).toEqual({ from: ms('2026-05-01T00:00:00Z'), to: now, clamped: false });
    expect(clampToRetention({ from: ms('2026-01-01T00:00:00Z'), to: now }, now, 30)).toEqual({ from: ms('2026-04-10T12:00:00Z'), to: now, clamped: true });
    // A window wholly before the cutoff becomes empty at the cutoff.
    const old = clampToRetention({ from: ms('2025-01-01T00:00:00Z'), to: ms('2025-02-01T00:00:00Z') }, now, 30);
    expect(old).toEqual({ from: ms('2026-04-10T12:00:00Z'), to: ms('2026-04-10T12:00:00Z'), clamped: true });
  });
});

describe('bucket labels', () => {
  const span = (from: string, to: string) => ({ from: ms(from), to: ms(to) });

  test('hourly on the Paris fall-back day: 02:00 appears once (it holds both hours)', () => {
    const labels = bucketLabels('hour', span('2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z'), 'Europe/Paris', 10_000)!;
    expect(labels).toHaveLength(24);
    expect(labels.filter((l) => l === '2026-10-25 02:00:00')).toHaveLength(1);
    expect(labels[0]).toBe('2026-10-25 00:00:00');
    expect(labels[23]).toBe('2026-10-25 23:00:00');
  });

  test('hourly on the Paris spring-forward day: 02:00 does not exist', () => {
    const labels = bucketLabels('hour', span('2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z'), 'Europe/Paris', 10_000)!;
    expect(labels).toHaveLength(23);
    expect(labels).not.toContain('2026-03-29 02:00:00');
    expect(labels).toContain('2026-03-29 03:00:00');
  });

  test('hourly in Kolkata keeps local hour labels', () => {
    const labels = bucketLabels('hour', span('2026-05-10T18:30:00Z', '2026-05-11T18:30:00Z'), 'Asia/Kolkata', 10_000)!;
    expect(labels).toHaveLength(24);
    expect(labels[0]).toBe('2026-05-11 00:00:00');
  });

  test('a partial first bucket keeps its boundary label', () => {
    expect(bucketLabels('hour', span('2026-05-10T13:27:00Z', '2026-05-10T15:27:00Z'), 'UTC', 10_000))
      .toEqual(['2026-05-10 13:00:00', '2026-05-10 14:00:00', '2026-05-10 15:00:00']);
  });

  test('weeks start on Monday', () => {
    // 2026-05-06 is a Wednesday.
    expect(bucketLabels('week', span('2026-05-06T00:00:00Z', '2026-05-20T00:00:00Z'), 'UTC', 10_000))
      .toEqual(['2026-05-04 00:00:00', '2026-05-11 00:00:00', '2026-05-18 00:00:00']);
  });

  test('days and months on the local calendar', () => {
    expect(bucketLabels('day', span('2026-10-24T22:00:00Z', '2026-10-26T23:00:00Z'), 'Europe/Paris', 10_000))
      .toEqual(['2026-10-25 00:00:00', '2026-10-26 00:00:00']);
    expect(bucketLabels('month', span('2025-12-31T23:00:00Z', '2026-03-31T22:00:00Z'), 'Europe/Paris', 10_000))
      .toEqual(['2026-01-01 00:00:00', '2026-02-01 00:00:00', '2026-03-01 00:00:00']);
  });

  test('more than the maximum is refused (null); exactly the maximum is fine', () => {
    expect(bucketLabels('minute', span('2026-05-01T00:00:00Z', '2026-05-08T00:00:00Z'), 'UTC', 10_000)).toBeNull();
    expect(bucketLabels('minute', span('2026-05-01T00:00:00Z', '2026-05-07T22:40:00Z'), 'UTC', 10_000)).toHaveLength(10_000);
    expect(bucketLabels('minute', span('2026-05-01T00:00:00Z', '2026-05-07T22:41:00Z'), 'UTC', 10_000)).toBeNull();
  });

  test('a window inside the repeated hour still has its bucket', () => {
    expect(bucketLabels('hour', span('2026-10-25T00:40:00Z', '2026-10-25T01:10:00Z'), 'Europe/Paris', 10_000)).toEqual(['2026-10-25 02:00:00']);
  });

  const minutes = (from: string, to: string) => (label: string) => label.slice(11, 16) >= from && label.slice(11, 16) <= to;

  test('a window ending inside the repeated hour keeps the first pass\'s later minutes (the last 50 minutes at 01:20 EST)', () => {
    // 01:30 EDT (05:30Z) to 01:20 EST (06:20Z): 01:30-01:59 of the first pass and 01:00-01:19 of the second.
    const labels = bucketLabels('minute', span('2026-11-01T05:30:00Z', '2026-11-01T06:20:00Z'), 'America/New_York', 10_000)!;
    expect(labels).toHaveLength(50);
    expect(labels.filter(minutes('01:00', '01:19'))).toHaveLength(20);
    expect(labels.filter(minutes('01:30', '01:59'))).toHaveLength(30);
    expect(labels[0]).toBe('2026-11-01 01:00:00');
    expect(labels[49]).toBe('2026-11-01 01:59:00');
    // 01:00 EDT to 01:59 EST: every minute of the hour once, 01:59 included.
    expect(bucketLabels('minute', span('2026-11-01T05:00:00Z', '2026-11-01T06:59:00Z'), 'America/New_York', 10_000)).toHaveLength(60);
  });

  test('a repeat longer than the bucket (Troll falls back two hours) keeps the hour reached before the fall-back', () => {
    // 00:00 +02 (22:00Z) to 01:30 +00 (01:30Z): wall 00:00-03:00 then 01:00-01:30.
    expect(bucketLabels('hour', span('2026-10-24T22:00:00Z', '2026-10-25T01:30:00Z'), 'Antarctica/Troll', 10_000))
      .toEqual(['2026-10-25 00:00:00', '2026-10-25 01:00:00', '2026-10-25 02:00:00']);
  });

  test('the skipped hour has no row when the window starts with milliseconds (last24h, the retention clamp)', () => {
    const labels = bucketLabels('hour', span('2026-03-08T05:00:00.001Z', '2026-03-09T04:00:00Z'), 'America/New_York', 10_000)!;
    expect(labels).toHaveLength(23); // 00:00 (partial) to 23:00, without 02:00
    expect(labels).not.toContain('2026-03-08 02:00:00');
    expect(bucketLabels('minute', span('2026-03-08T06:59:00.250Z', '2026-03-08T07:02:00Z'), 'America/New_York', 10_000))
      .toEqual(['2026-03-08 01:59:00', '2026-03-08 03:00:00', '2026-03-08 03:01:00']);
  });

  test('a window ending where a day begins at 01:00 (Santiago skips midnight) has no row for that day', () => {
    // Sep 1 00:00 -04 to Sep 6 01:00 -03: Sep 1-5.
    const days = bucketLabels('day', span('2026-09-01T04:00:00Z', '2026-09-06T04:00:00Z'), 'America/Santiago', 10_000)!;
    expect(days).toEqual(['2026-09-01 00:00:00', '2026-09-02 00:00:00', '2026-09-03 00:00:00', '2026-09-04 00:00:00', '2026-09-05 00:00:00']);
    // And the day itself, which starts at 01:00, is one row.
    expect(bucketLabels('day', span('2026-09-06T04:00:00Z', '2026-09-07T03:00:00Z'), 'America/Santiago', 10_000)).toEqual(['2026-09-06 00:00:00']);
    // last7d viewed on Sep 5 ends where Sep 6 begins: 7 rows, not a phantom 8th for "tomorrow".
    const week = resolvePeriod('last7d', { now: ms('2026-09-05T15:00:00Z'), tz: 'America/Santiago', earliestDatum: null });
    expect(bucketLabels('day', week, 'America/Santiago', 10_000)).toHaveLength(7);
  });
});
