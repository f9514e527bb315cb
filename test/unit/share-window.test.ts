import { setClock } from '../../core/clock';
import type { Site } from '../../core/domain';
import type { ShareRow } from '../../model/share';
import { boardWindow, type LiveBoard } from '../../public/share';

/**
 * The viewer's window on a share board, on a clock that moves between reads (as the real one does):
 * the board's own widest window must never be refused as reaching past max_range_days.
 */
const DAY = 86_400_000;
const board = (maxRangeDays: number, timezone = 'UTC'): LiveBoard => ({
  row: { max_range_days: maxRangeDays } as ShareRow,
  site: { timezone } as Site,
  retentionDays: 1095,
});

afterEach(() => {
  jest.restoreAllMocks();
  setClock(null);
});

function tickingClock(startMs: number): void {
  let t = startMs;
  jest.spyOn(Date, 'now').mockImplementation(() => (t += 1));
}

test('period=all is the whole allowed range, even when the clock moves while it is resolved', () => {
  setClock(null);
  const start = Date.parse('2026-03-10T12:00:00Z');
  tickingClock(start);
  const w = boardWindow(board(30), { period: 'all' });
  expect(w.fromMs).toBeGreaterThanOrEqual(start - 30 * DAY);
  expect(w.fromMs).toBeLessThan(start - 30 * DAY + 1000);
});

test('a window reaching past max_range_days is refused, naming it', () => {
  setClock('2026-03-10T12:00:00Z');
  expect(() => boardWindow(board(7), { period: 'last30d' })).toThrow(/max_range_days/);
  expect(boardWindow(board(7), { period: 'last7d' }).fromMs).toBe(Date.parse('2026-03-04T00:00:00Z'));
});

test.each([
  ['2026-11-21T23:30:00Z', 'Europe/London', 30, 'last30d'],
  ['2026-11-21T21:30:00Z', 'Europe/Helsinki', 30, 'last30d'],
  ['2026-11-05T04:30:00Z', 'America/New_York', 7, 'last7d'],
])('at %s in %s, after a fall-back, the board\'s own default window (%d days: %s) is served', (now, tz, days, period) => {
  setClock(now);
  const w = boardWindow(board(days, tz), {});
  expect(w.fromMs).toBeLessThan(Date.parse(now) - days * DAY + 3_600_000); // an hour longer than days x 24 h
  expect(boardWindow(board(days, tz), { period }).fromMs).toBe(w.fromMs);
  // A day further back is still refused.
  expect(() => boardWindow(board(days, tz), { from: new Date(w.fromMs - DAY).toISOString(), to: now })).toThrow(/max_range_days/);
});
