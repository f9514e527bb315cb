import { z } from 'zod';

/**
 * An instant as every interface of Tally takes one: report and resource windows (`from`, `to`), a
 * note's `occurred_at`, an import line's `ts`, the CLI's `--expires-at`. ISO 8601 with an offset, as
 * ISO 8601 and RFC 3339 write it: `T` or a space between date and time (either case), seconds and a
 * fraction optional, the offset `Z`, `±hh:mm`, `±hhmm` or `±hh`. One parser, so a value one of them
 * takes the others take too (the import read `+0545` and omitted seconds; the reports refused them).
 *
 * Checked field by field: Date.parse rolls 2026-02-30 over into March and reads years 0-99 as
 * 1900-1999, so neither decides here.
 */
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:Z|([+-])(\d{2})(?::?(\d{2}))?)$/i;

export const INSTANT_FORMAT = 'an ISO 8601 date-time with an offset, e.g. 2026-01-31T00:00:00+01:00';
/** The problem parseInstant names when the text is not shaped as an instant at all. */
export const NOT_AN_INSTANT = `must be ${INSTANT_FORMAT}`;

/** 400 Gregorian years are exactly 146,097 days: shifting by them keeps Date.UTC off its 1900s reading of years 0-99. */
const FOUR_CENTURIES_MS = 146_097 * 86_400_000;

/** Epoch milliseconds, or the problem in words that follow the field's name ("must be ...", "is not ..."). */
export function parseInstant(text: string): number | string {
  const m = SHAPE.exec(text);
  if (!m) return NOT_AN_INSTANT;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  const oh = Number(m[9] ?? 0);
  const om = Number(m[10] ?? 0);
  const day = new Date(Date.UTC(y + 400, mo - 1, d));
  const calendar = day.getUTCFullYear() === y + 400 && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
  if (!calendar || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return `is not a valid date and time: ${text}`;
  const fraction = m[7] ? Math.floor(Number(m[7]) * 1000) : 0;
  const offsetMs = (m[8] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  return Date.UTC(y + 400, mo - 1, d, h, mi, s, fraction) - FOUR_CENTURIES_MS - offsetMs;
}

/** A string field holding an instant, for zod bodies and query objects: the problem in the field's words. */
export const instantString = (range?: { fromMs: number; toMs: number; words: string }) =>
  z.string({ error: (i) => (i.input === undefined ? `is required: ${INSTANT_FORMAT}` : NOT_AN_INSTANT) }).superRefine((v, ctx) => {
    const ms = parseInstant(v);
    if (typeof ms === 'string') ctx.addIssue({ code: 'custom', message: ms });
    else if (range && (ms < range.fromMs || ms >= range.toMs)) ctx.addIssue({ code: 'custom', message: range.words });
  });

/** The instant a string that `instantString` accepted stands for; text nothing checked is a bug, thrown as one. */
export function instantMs(text: string): number {
  const ms = parseInstant(text);
  if (typeof ms === 'string') throw new Error(`instantMs: unchecked text (${ms})`);
  return ms;
}

/**
 * A query string's `+` arrives as a space (application/x-www-form-urlencoded), so an unencoded
 * `from=2026-01-31T00:00:00+01:00` reads `...00:00 01:00`. No other reading of a space before a
 * trailing offset exists, so query parameters take it as the `+` it was.
 */
export const unplussed = (text: string): string =>
  text.replace(/^(\S+[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$/i, '$1+$2');
