import { z } from 'zod';

/**
 * Refusals in the service's own words wherever a schema gives none (PRODUCT.md §6: the message says
 * what is wrong): zod's defaults read as library output ("Invalid input: expected array, received
 * undefined", "Too big: expected string to have <=300 characters"). A schema's own message still wins
 * (zod's precedence: the schema's, then this global map). Loaded once, by every module that parses.
 */
const TYPE_NAMES: Record<string, string> = { int: 'an integer', array: 'an array', object: 'a JSON object', string: 'a string', number: 'a number', boolean: 'true or false', null: 'null' };

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function bound(kind: 'most' | 'least', origin: string | undefined, limit: unknown, inclusive: boolean | undefined, exact?: boolean): string {
  const n = Number(limit);
  if (exact && (origin === 'string' || origin === 'array')) return `must have exactly ${n} ${origin === 'string' ? 'characters' : 'items'}`;
  if (origin === 'string') return kind === 'most' ? `allows at most ${n} characters` : n === 1 ? 'must not be empty' : `needs at least ${n} characters`;
  if (origin === 'array' || origin === 'set') return kind === 'most' ? `allows at most ${n} items` : n === 1 ? 'must not be empty' : `needs at least ${n} items`;
  if (kind === 'most') return inclusive === false ? `must be less than ${n}` : `must be at most ${n}`;
  return inclusive === false ? `must be greater than ${n}` : `must be at least ${n}`;
}

interface FormatIssue { format: string; pattern?: string; prefix?: string; suffix?: string; includes?: string }

/** A string check's refusal: the pattern or text it wanted, where the check has one. */
function formatMessage(iss: FormatIssue): string {
  if (iss.format === 'starts_with') return `must start with "${iss.prefix}"`;
  if (iss.format === 'ends_with') return `must end with "${iss.suffix}"`;
  if (iss.format === 'includes') return `must contain "${iss.includes}"`;
  if (iss.format === 'regex') return `must match ${iss.pattern}`;
  return `must be a valid ${iss.format}`;
}

z.config({
  customError: (iss) => {
    switch (iss.code) {
      case 'invalid_type':
        return iss.input === undefined ? 'is required' : `must be ${TYPE_NAMES[iss.expected] ?? iss.expected}`;
      case 'invalid_value':
        return iss.values.length === 1 ? `must be ${shown(iss.values[0])}` : `must be one of ${iss.values.map(shown).join(', ')}`;
      case 'too_big':
        return bound('most', iss.origin, iss.maximum, iss.inclusive, iss.exact);
      case 'too_small':
        return bound('least', iss.origin, iss.minimum, iss.inclusive, iss.exact);
      case 'invalid_format':
        return formatMessage(iss as unknown as FormatIssue);
      default:
        return undefined;
    }
  },
});
