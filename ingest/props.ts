import { clip } from '../core/text';

/**
 * Custom properties: an object of string keys to scalar values. Numbers and booleans are kept as
 * their text (trackers send `{plan: 3}`); nested objects, arrays and null are refused with a message
 * naming the key. Bounded so one event cannot bloat a row.
 */
export const MAX_PROPS = 30;
const MAX_KEY = 300;
const MAX_VALUE = 2000;

export function parseProps(value: unknown, field = 'props'): Record<string, string> | string {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return `${field} must be an object of strings, numbers or booleans`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_PROPS) return `${field} allows at most ${MAX_PROPS} keys`;
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (!k || k.length > MAX_KEY) return `${field} keys must be 1-${MAX_KEY} characters`;
    if (typeof v === 'string') out[k] = clip(v, MAX_VALUE);
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else return `${field}.${k} must be a string, number or boolean`;
  }
  return out;
}

export const MAX_NAME = 120;

/**
 * Plausible's built-in event names, accepted as ours. A Map, not an object literal: an event named
 * "constructor" must not pick up Object.prototype's.
 */
export const PLAUSIBLE_NAMES: ReadonlyMap<string, string> = new Map([['Outbound Link: Click', 'exit_link'], ['File Download', 'file_download']]);

/**
 * Events that are about a link: reports group them by its target, so one without a target would be
 * stored and shown nowhere. Refused instead (live: `props.url`, import: `link`).
 */
export const LINK_EVENTS: ReadonlySet<string> = new Set(['exit_link', 'file_download']);
export const linkRequired = (name: string, field: string) => `${field} is required for ${name} events: the link target`;

/** A field's refusal, beside its parsed value. */
export type FieldError = { error: string };
export const isError = (v: unknown): v is FieldError => typeof v === 'object' && v !== null && 'error' in v;

/** An event name (live `name`/`n`, import `name`): required, a string, at most MAX_NAME characters. */
export function parseName(v: unknown, field = 'name'): string | FieldError {
  if (v === undefined || v === null || v === '') return { error: 'name is required' };
  if (typeof v !== 'string') return { error: `${field} must be a string` };
  if (v.length > MAX_NAME) return { error: `${field} is longer than ${MAX_NAME} characters` };
  return v;
}

/**
 * value_cents: a whole number of the smallest currency unit, never negative: a goal's value adds to
 * goal_value_cents, and refunds are the payment provider's to report, not a goal's.
 */
export function parseValueCents(value: unknown, field = 'value_cents'): number | undefined | string {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) return `${field} must be an integer (cents)`;
  if (!Number.isSafeInteger(value)) return `${field} must be at most ${Number.MAX_SAFE_INTEGER} cents`;
  if (value < 0) return `${field} must not be negative`;
  return value;
}
