import { z } from 'zod';
import { fetchSize, LIMIT, OFFSET, type Bounds, type Paging } from '../core/paging';
import './openapi'; // extends zod with .openapi() before the schemas below use it

/**
 * A whole number written as text (a query parameter, a CLI flag): digits only, so `0x2`, `1e0`, `2.0`,
 * an empty value and a repeated parameter are refused with `message`, never read as another number.
 */
export function digitsBetween(min: number, max: number, message: string) {
  return z.string({ error: message }).regex(/^\d{1,16}$/, message).transform(Number).refine((n) => n >= min && n <= max, message);
}

/** A paging parameter, as the reports read theirs (query/params.ts), with its default. */
function integerParam({ min, max, fallback }: Bounds) {
  return digitsBetween(min, max, `must be an integer from ${min} to ${max}`)
    .optional()
    .transform((n) => n ?? fallback)
    .openapi({ type: 'integer', minimum: min, maximum: max, default: fallback });
}

/** `limit` 1-1000 (default 100) and `offset` (default 0), refused outside those bounds, never clamped. */
export const pagingShape = {
  limit: integerParam(LIMIT),
  offset: integerParam(OFFSET),
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
