import { z } from 'zod';
import '../../core/zod-messages';

/** Refusals in the service's words where a schema gives none (core/zod-messages.ts), and a schema's own words kept. */
const message = (schema: z.ZodType, value: unknown) => schema.safeParse(value).error!.issues[0].message;

test.each([
  [z.object({ a: z.array(z.string()) }), {}, 'is required'],
  [z.array(z.string()), 'x', 'must be an array'],
  [z.object({}), [1], 'must be a JSON object'],
  [z.number().int(), 1.5, 'must be an integer'],
  [z.boolean(), 'yes', 'must be true or false'],
  [z.enum(['x', 'y']), 'z', 'must be one of x, y'],
  [z.literal('only'), 'other', 'must be only'],
  [z.string().max(3), 'abcd', 'allows at most 3 characters'],
  [z.string().min(1), '', 'must not be empty'],
  [z.string().min(2), 'a', 'needs at least 2 characters'],
  [z.string().length(2), 'abc', 'must have exactly 2 characters'],
  [z.array(z.number()).max(1), [1, 2], 'allows at most 1 items'],
  [z.number().max(5), 6, 'must be at most 5'],
  [z.number().gt(5), 5, 'must be greater than 5'],
  [z.string().uuid(), 'no', 'must be a valid uuid'],
  [z.string().regex(/^a+$/), 'b', 'must match /^a+$/'],
  [z.string().startsWith('/'), 'x', 'must start with "/"'],
  [z.string().max(3, 'custom words'), 'abcd', 'custom words'],
])('case %#', (schema, value, expected) => {
  expect(message(schema, value)).toBe(expected);
});
