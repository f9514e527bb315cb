import { z } from 'zod';
import './zod-messages';

/**
 * The type error of a body field that tells a missing field from a wrong one. zod 4's schema-level
 * `error` also answers every later check that has no message of its own, so a 201-character name
 * or a threshold of "5" used to say "is required": handle only the type check here, and give every
 * check its own message.
 */
export const typeError = (kind: string, what?: string) => ({
  error: (iss: { code?: string; input?: unknown }) =>
    iss.code !== 'invalid_type' ? undefined : iss.input === undefined ? `is required: ${what ?? kind}` : `must be ${kind}${what ? `: ${what}` : ''}`,
});

/** A trimmed, non-empty text of at most `max` characters. */
export const text = (max: number, what?: string) =>
  z.string(typeError('a string', what)).trim().min(1, 'must not be empty').max(max, `allows at most ${max} characters`);

/**
 * A reference to collected text (an event name a goal or funnel step matches), kept exactly as
 * given: ingest stores names as sent, so trimming `"Sign up "` made a reference that could never
 * match the events it names. Only a blank value is refused.
 */
export const verbatim = (max: number, what?: string) =>
  z.string(typeError('a string', what)).min(1, 'must not be empty').max(max, `allows at most ${max} characters`)
    .refine((s) => s.trim() !== '', 'must not be blank');

/**
 * Characters that hide or reorder what a reader sees: C0 and C1 controls, and the bidirectional
 * embeddings, overrides and isolates, and the line and paragraph separators. In a one-line name shown on dashboards and public boards they
 * only disguise it (a right-to-left override makes "gpj.exe" read "exe.jpg"); right-to-left text itself
 * needs none of them.
 */
const HIDDEN_IN_NAMES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** Multi-line text keeps tab, line feed and carriage return; other controls are never typed. */
const HIDDEN_IN_PROSE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

const visible = (pattern: RegExp, what: string) => (s: string) => {
  const at = s.search(pattern);
  // The position a reader counts: characters (code points), not UTF-16 units (an emoji is one).
  return at < 0 ? true : `must not contain ${what} (U+${s.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0')} at character ${[...s.slice(0, at)].length + 1})`;
};
const noHidden = visible(HIDDEN_IN_NAMES, 'control characters or bidirectional formatting');
/** An identifier's check (import `visitor`/`session`): true, or the problem naming the code point and its position. */
export const noControlCharacters = visible(/[\u0000-\u001f\u007f-\u009f]/, 'control characters');
const noControls = visible(HIDDEN_IN_PROSE, 'control characters other than tab and line breaks');

/** A one-line name: the schema's text without controls or bidirectional formatting characters. */
export const oneLine = <T extends z.ZodType<string>>(schema: T) => refineBy(schema, noHidden);

/** A one-line name or label: `text` without controls or bidirectional formatting characters. */
export const label = (max: number, what?: string) => oneLine(text(max, what));

/** Multi-line free text of at most `max` characters: no controls but tab and line breaks. */
export const prose = <T extends z.ZodType<string>>(schema: T) => refineBy(schema, noControls);

function refineBy<T extends z.ZodType<string>>(schema: T, check: (s: string) => true | string): T {
  return schema.superRefine((s, ctx) => {
    const verdict = check(s);
    if (verdict !== true) ctx.addIssue({ code: 'custom', message: verdict });
  });
}
