import { consoleDate, retentionStart, shiftDate } from '../../integrations/search-console';

/** The import's calendar: Pacific dates, whole-day steps, and the console's 16 months. */
describe('Search Console dates', () => {
  test.each([
    ['2026-11-21T05:00:00Z', '2026-11-20'], // 21:00 the day before in PST (UTC-8)
    ['2026-11-21T08:00:00Z', '2026-11-21'],
    ['2026-07-01T06:59:00Z', '2026-06-30'], // 23:59 in PDT (UTC-7)
    ['2026-07-01T07:00:00Z', '2026-07-01'],
    ['2026-03-08T09:30:00Z', '2026-03-08'], // 01:30 PST, half an hour before the clocks go forward
  ])('the console date at %s is %s', (at, date) => {
    expect(consoleDate(Date.parse(at))).toBe(date);
  });

  test.each([
    ['2026-03-01', -1, '2026-02-28'],
    ['2024-02-28', 1, '2024-02-29'],
    ['2026-12-31', 1, '2027-01-01'],
    ['2026-03-09', -2, '2026-03-07'], // across the change to summer time: still whole dates
    ['2026-11-21', -40, '2026-10-12'],
  ])('%s moved by %i days is %s', (date, days, moved) => {
    expect(shiftDate(date, days)).toBe(moved);
  });

  test.each([
    ['2026-11-21', '2025-07-01'],
    ['2026-03-31', '2024-11-01'],
    ['2026-05-01', '2025-01-01'],
    ['2026-04-15', '2024-12-01'],
  ])('on %s the console still holds days from %s', (today, first) => {
    expect(retentionStart(today)).toBe(first);
  });
});
