import { z } from 'zod';

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
