import { globToRegex } from '../../core/glob';
import { bin, eq, fn, lit, str, type Expr } from '../sql/ast';

/**
 * Filter operators: how a subject expression is compared with a caller's value. The value always
 * travels as a bound String parameter; `glob` turns it into an anchored RE2 pattern first (the
 * same glob meaning as excluded paths and page goals). Funnel steps use the same set.
 */
export const OPERATOR_KEYS = ['equals', 'starts_with', 'ends_with', 'contains', 'glob'] as const;
export type OperatorKey = (typeof OPERATOR_KEYS)[number];

export interface OperatorDef {
  describe: string;
  condition(subject: Expr, value: string): Expr;
}

export const OPERATORS = {
  equals: { describe: 'is exactly', condition: (s, v) => eq(s, str(v)) },
  starts_with: { describe: 'starts with', condition: (s, v) => fn('startsWith', s, str(v)) },
  ends_with: { describe: 'ends with', condition: (s, v) => fn('endsWith', s, str(v)) },
  contains: { describe: 'contains', condition: (s, v) => bin('>', fn('position', s, str(v)), lit(0)) },
  glob: { describe: 'matches the glob', condition: (s, v) => fn('match', s, str(globToRegex(v))) },
} satisfies Record<OperatorKey, OperatorDef>;
