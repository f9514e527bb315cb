import { z } from 'zod';
import { fetchSize, type Paging } from '../core/paging';
import './openapi'; // extends zod with .openapi() before the schemas below use it

/** `limit` 1-1000 (default 100) and `offset` (default 0), refused outside those bounds, never clamped. */
export const pagingShape = {
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  // TRAP: the OpenAPI generator calls a schema nullable when it accepts null, and coercion turns null
  // into 0; the explicit description keeps the document honest.
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0)
    .openapi({ type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0 }),
};
export const pagingQuery = z.object(pagingShape);

/**
 * `has_more` is measured: callers fetch `limit + 1` rows (see `fetchSize`) and this trims the extra
 * one. There is no total count.
 */
export { fetchSize, type Paging };

export function paged<T>(rows: T[], p: Paging): { data: T[]; meta: { page: Paging & { has_more: boolean } } } {
  return { data: rows.slice(0, p.limit), meta: { page: { limit: p.limit, offset: p.offset, has_more: rows.length > p.limit } } };
}

/** Page over an in-memory list (small metadata lists) with the same contract. */
export const pageArray = <T>(all: T[], p: Paging) => paged(all.slice(p.offset, p.offset + fetchSize(p)), p);
