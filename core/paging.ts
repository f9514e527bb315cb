/**
 * The paging contract every list shares: `has_more` is measured, never inferred. A list asks storage
 * for `fetchSize(page)` rows (one more than the page) and the API trims the extra one (api/paging.ts).
 */
export type Paging = { limit: number; offset: number };

export const fetchSize = (p: Paging) => p.limit + 1;

/** A whole-number parameter's bounds and default. */
export interface Bounds { min: number; max: number; fallback: number }

/** `limit` and `offset` wherever a list or report pages: one definition for parsers and the document. */
export const LIMIT: Bounds = { min: 1, max: 1000, fallback: 100 };
export const OFFSET: Bounds = { min: 0, max: 1_000_000_000, fallback: 0 };
