/**
 * The paging contract every list shares: `has_more` is measured, never inferred. A list asks storage
 * for `fetchSize(page)` rows (one more than the page) and the API trims the extra one (api/paging.ts).
 */
export type Paging = { limit: number; offset: number };

export const fetchSize = (p: Paging) => p.limit + 1;
