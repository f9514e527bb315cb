import { setClock } from '../../core/clock';
import { isoSecondsInZone, localDate, resolveWindow, windowQuery, zonedMidnight } from '../../model/notes-window';
import { resolvePeriod } from '../../query/window/resolve';

afterEach(() => setClock(null));

test('local midnight is found across a DST change', () => {
  // New York springs forward on 8 March 2026: midnight before is -05:00, after is -04:00.
  expect(new Date(zonedMidnight(2026, 3, 8, 'America/New_York')).toISOString()).toBe('2026-03-08T05:00:00.000Z');
  expect(new Date(zonedMidnight(2026, 3, 9, 'America/New_York')).toISOString()).toBe('2026-03-09T04:00:00.000Z');
  expect(isoSecondsInZone(Date.parse('2026-03-09T04:00:00Z'), 'America/New_York')).toBe('2026-03-09T00:00:00-04:00');
  expect(isoSecondsInZone(Date.parse('2026-03-09T04:00:00Z'), 'Asia/Kolkata')).toBe('2026-03-09T09:30:00+05:30');
  expect(localDate(Date.parse('2026-03-11T02:00:00Z'), 'America/New_York')).toBe('2026-03-10');
});

test('a day whose midnight is skipped starts when the clocks jump, as in the reports\' windows', () => {
  // Santiago springs forward at midnight on 6 September 2026: 00:00 -04:00 becomes 01:00 -03:00. The
  // day starts at 04:00Z; the old two-step offset guess gave 03:00Z, an hour of the day before.
  expect(new Date(zonedMidnight(2026, 9, 6, 'America/Santiago')).toISOString()).toBe('2026-09-06T04:00:00.000Z');
  setClock('2026-09-06T15:00:00Z');
  const w = resolveWindow({ period: 'today', tz: 'America/Santiago' }, 'last30d', 1095);
  expect([isoSecondsInZone(w.fromMs, 'America/Santiago'), isoSecondsInZone(w.toMs, 'America/Santiago')]).toEqual(['2026-09-06T01:00:00-03:00', '2026-09-07T00:00:00-03:00']);
  expect({ from: w.fromMs, to: w.toMs }).toEqual(resolvePeriod('today', { now: Date.parse('2026-09-06T15:00:00Z'), tz: 'America/Santiago', earliestDatum: null }));
});

test('instants are written to the second in the zone\'s offset', () => {
  expect(isoSecondsInZone(Date.parse('2026-03-10T15:30:05.987Z'), 'Asia/Kolkata')).toBe('2026-03-10T21:00:05+05:30');
});

test.each([
  ['today', 'UTC', '2026-03-10T00:00:00+00:00', '2026-03-11T00:00:00+00:00'],
  ['yesterday', 'UTC', '2026-03-09T00:00:00+00:00', '2026-03-10T00:00:00+00:00'],
  ['last24h', 'UTC', '2026-03-09T15:30:00+00:00', '2026-03-10T15:30:00+00:00'],
  ['last7d', 'America/New_York', '2026-03-04T00:00:00-05:00', '2026-03-11T00:00:00-04:00'],
  ['last30d', 'UTC', '2026-02-09T00:00:00+00:00', '2026-03-11T00:00:00+00:00'],
  ['last12m', 'UTC', '2025-04-01T00:00:00+00:00', '2026-04-01T00:00:00+00:00'],
  ['month', 'Europe/Berlin', '2026-03-01T00:00:00+01:00', '2026-04-01T00:00:00+02:00'],
  ['year', 'UTC', '2026-01-01T00:00:00+00:00', '2027-01-01T00:00:00+00:00'],
] as const)('period %s in %s resolves to [%s, %s)', (period, tz, from, to) => {
  setClock('2026-03-10T15:30:00Z');
  const w = resolveWindow({ period, tz }, 'last30d', 1095);
  expect([isoSecondsInZone(w.fromMs, tz), isoSecondsInZone(w.toMs, tz), w.clamped]).toEqual([from, to, false]);
});

test('a window before the retention cutoff starts at the cutoff with clamped true', () => {
  setClock('2026-03-10T00:00:00Z');
  const w = resolveWindow({ from: '2025-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', tz: 'UTC' }, 'last30d', 30);
  expect(w).toEqual({
    fromMs: Date.parse('2026-02-08T00:00:00Z'), toMs: Date.parse('2026-02-08T00:00:00Z'), tz: 'UTC', clamped: true,
    asked: { from: Date.parse('2025-01-01T00:00:00Z'), to: Date.parse('2026-01-01T00:00:00Z') }, now: Date.parse('2026-03-10T00:00:00Z'),
  });
});

test('window parameters are refused in combination or half given', () => {
  expect(windowQuery.safeParse({ period: 'today', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }).success).toBe(false);
  expect(windowQuery.safeParse({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }).success).toBe(false);
  expect(windowQuery.safeParse({ from: '2026-01-01T00:00:00+02:00', to: '2026-01-02T00:00:00Z' }).success).toBe(true);
});
