import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/** Every API route registers its zod schemas here as it is defined; the document is generated from them. */
export const registry = new OpenAPIRegistry();

registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'tly_ API key' });

export const ErrorBody = registry.register(
  'Error',
  z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
);

/** An instant, ISO 8601 / RFC 3339 with `Z` or an offset: every `*_at` field and a range's bounds. */
export const Timestamp = z.string().openapi({ format: 'date-time' });

/** `meta.page` of paged lists: `has_more` is measured, there is no total. */
export const PageMeta = registry.register(
  'Page',
  z.object({ limit: z.number().int(), offset: z.number().int(), has_more: z.boolean() }),
);

/** `meta.range` of windowed answers: the window covered, ISO 8601 with the tz offset; clamped to retention. */
export const RangeMeta = registry.register(
  'Range',
  z.object({ from: Timestamp, to: Timestamp, tz: z.string(), clamped: z.boolean() }),
);

// Regenerated when definitions were added since (a route module registered after the first request).
let cached: { size: number; doc: object } | null = null;
export function openApiDocument(): object {
  if (cached?.size === registry.definitions.length) return cached.doc;
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Tally API', version: '1.0.0', description: 'Web analytics reports over JSON. All paths are under /api/v1.' },
    servers: [{ url: '/api/v1' }],
    security: [{ bearer: [] }],
  });
  cached = { size: registry.definitions.length, doc };
  return doc;
}
