/**
 * Text that a ClickHouse String column holds as UTF-8. A JSON `\ud800` escape without its partner
 * parses to a lone UTF-16 surrogate, which has no UTF-8 form: ClickHouse refuses the whole insert
 * holding it, so one such event would fail every event batched with it. Inputs are checked where
 * they are parsed and refused with the field named.
 */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Nothing stored lies deeper than this (props are one flat object), and deeper values are refused or
 * ignored by the field checks after this one. TRAP: walking all the way down overflowed the stack on
 * a 16 KB body of brackets (a 503 and an error log per request, and an aborted import).
 */
const STORED_DEPTH = 8;

/**
 * The path of the first string (value or key) in a parsed JSON value that is not well-formed, or null.
 * Array items are `[i]` as ingest names them (`props.a`, `p[2]`), or `.i` as the API's schema
 * refusals do (`excluded_paths.1`) with `dotted`.
 */
export function malformedTextAt(value: unknown, path: string, style: { dotted?: boolean } = {}, depth = 0): string | null {
  if (typeof value === 'string') return wellFormed(value) ? null : path;
  if (typeof value !== 'object' || value === null || depth >= STORED_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = malformedTextAt(value[i], style.dotted ? `${path}.${i}` : `${path}[${i}]`, style, depth + 1);
      if (at) return at;
    }
    return null;
  }
  for (const key in value) {
    if (!wellFormed(key)) return `${path ? path + ' ' : ''}keys`;
    const at = malformedTextAt((value as Record<string, unknown>)[key], path ? `${path}.${key}` : key, style, depth + 1);
    if (at) return at;
  }
  return null;
}

export const MALFORMED_TEXT = 'must be valid Unicode text (it holds an unpaired surrogate escape)';
export const malformedMessage = (at: string) => `${at} ${MALFORMED_TEXT}`;

/** `s` cut to at most `max` UTF-16 units, never between the two halves of a surrogate pair. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
