import fc from 'fast-check';
import { instantMs, parseInstant, unplussed } from '../../../core/instant';
import { parseWindow } from '../../../query/params';
import { windowQuery } from '../../../model/notes-window';

/** Every spelling ISO 8601 / RFC 3339 give an instant with an offset, and what each one is. */
test.each([
  ['2026-01-31T00:00:00+01:00', Date.UTC(2026, 0, 30, 23)],
  ['2026-01-31t00:00:00z', Date.UTC(2026, 0, 31)],
  ['2026-01-31 00:00:00Z', Date.UTC(2026, 0, 31)],
  ['2026-01-31T00:00Z', Date.UTC(2026, 0, 31)],
  ['2026-01-31T00:00:00+0545', Date.UTC(2026, 0, 30, 18, 15)],
  ['2026-01-31T00:00:00-03', Date.UTC(2026, 0, 31, 3)],
  ['2026-01-31T00:00:00.123456789Z', Date.UTC(2026, 0, 31, 0, 0, 0, 123)],
  ['2024-02-29T12:00:00Z', Date.UTC(2024, 1, 29, 12)],
  ['0050-06-01T00:00:00Z', Date.UTC(2050, 5, 1) - 2000 * 365.2425 * 86_400_000],
])('%s is read as the instant it names', (text, ms) => {
  expect(parseInstant(text)).toBe(ms);
});

test.each([
  ['2026-02-30T10:00:00Z', 'is not a valid date and time: 2026-02-30T10:00:00Z'],
  ['2025-02-29T10:00:00Z', 'is not a valid date and time: 2025-02-29T10:00:00Z'],
  ['2026-03-05T24:00:00Z', 'is not a valid date and time: 2026-03-05T24:00:00Z'],
  ['2026-03-05T10:60:00Z', 'is not a valid date and time: 2026-03-05T10:60:00Z'],
  ['2026-03-05T10:00:60Z', 'is not a valid date and time: 2026-03-05T10:00:60Z'],
  ['2026-03-05T03:00:00+24', 'is not a valid date and time: 2026-03-05T03:00:00+24'],
  ['2026-03-05T03:00:00', /^must be an ISO 8601 date-time with an offset/],
  ['2026-03-05', /^must be an ISO 8601 date-time with an offset/],
  ['1772668800', /^must be an ISO 8601 date-time with an offset/],
  ['2026-03-05T03:00:00+1:00', /^must be an ISO 8601 date-time with an offset/],
])('%s is refused, saying why', (text, problem) => {
  const got = parseInstant(text);
  if (typeof problem === 'string') expect(got).toBe(problem);
  else expect(got).toMatch(problem);
});

/** Whatever the spelling, the same instant: Date's own reading agrees wherever it reads the value. */
test('every offset and spelling of an instant reads back to it', () => {
  fc.assert(fc.property(
    fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2199, 11, 31) }),
    fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
    fc.constantFrom('T', 't', ' '), fc.boolean(),
    (ms, offsetMin, sep, colon) => {
      const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 23);
      const sign = offsetMin < 0 ? '-' : '+';
      const abs = Math.abs(offsetMin);
      const off = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${colon ? ':' : ''}${String(abs % 60).padStart(2, '0')}`;
      expect(parseInstant(`${local.slice(0, 10)}${sep}${local.slice(11)}${off}`)).toBe(ms);
    },
  ), { numRuns: 2000 });
});

test('an unencoded + in a query string (read as a space) is the offset it was', () => {
  expect(unplussed('2026-01-31T00:00:00 01:00')).toBe('2026-01-31T00:00:00+01:00');
  expect(unplussed('2026-01-31 00:00 0545')).toBe('2026-01-31 00:00+0545');
  expect(unplussed('2026-01-31 00:00:00Z')).toBe('2026-01-31 00:00:00Z');
  expect(parseWindow({ from: '2026-01-31T00:00:00 01:00', to: '2026-02-01T00:00:00 01:00' }))
    .toEqual({ kind: 'range', from: Date.UTC(2026, 0, 30, 23), to: Date.UTC(2026, 0, 31, 23) });
});

/** The reports' parameters and the resource routes' (notes, funnel report, share board) take the same values. */
test.each([
  ['2026-01-31t00:00z', null],
  ['2026-01-31T00:00:00+0545', null],
  ['2026-02-30T00:00:00Z', 'from: is not a valid date and time: 2026-02-30T00:00:00Z'],
  ['1969-12-31T00:00:00Z', 'from: must lie between 1970 and 2200'],
  ['yesterday', /^from: must be an ISO 8601 date-time with an offset/],
])('from=%s: the reports and the resource routes agree', (from, refusal) => {
  const to = '2026-03-01T00:00:00Z';
  const resource = windowQuery.safeParse({ from, to });
  const said = resource.success ? null : `${resource.error.issues[0].path.join('.')}: ${resource.error.issues[0].message}`;
  if (refusal === null) {
    expect(said).toBeNull();
    expect(parseWindow({ from, to })).toMatchObject({ kind: 'range', to: Date.parse(to) });
  } else {
    expect(said).toMatch(refusal);
    expect(() => parseWindow({ from, to })).toThrow(refusal);
  }
});

test('instantMs reads checked text and throws on text nothing checked, never handing a problem string on as a number', () => {
  expect(instantMs('2026-03-01T10:00:00+01:00')).toBe(Date.parse('2026-03-01T09:00:00Z'));
  expect(() => instantMs('yesterday')).toThrow(/unchecked text/);
});
