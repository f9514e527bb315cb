import { z } from 'zod';
import { notFound } from '../../core/errors';
import { geoLookup } from '../../ingest/enrich/geo';
import { importEvents } from '../../ingest/import/importer';
import { collectorOf } from '../../ingest/live/module';
import { addCommands, define, uuid } from './commands';

/**
 * `tally events import --site S --file F|-`: the request body is the NDJSON stream (PRODUCT.md §2).
 * Prints {imported, rejected, errors: [first 10 {line, message}]}.
 */
addCommands({
  'events import': define({
    args: z.object({ site: uuid('site', 'site uuid') }),
    async run(ctx, a, body, shutdown) {
      const site = await ctx.repos.getSite(a.site);
      if (!site) throw notFound('site');
      return importEvents(ctx.store, geoLookup(ctx.config.geoipDb), site, body, { signal: shutdown });
    },
  }),
});

/** `events stats`: live collection counters since start (received, stored, dropped by reason, ...). */
addCommands({
  'events stats': define({
    args: z.object({}),
    async run(ctx) {
      const collector = collectorOf(ctx);
      return { ...(collector?.stats.snapshot() ?? {}), pending: collector?.pending ?? 0 };
    },
  }),
});
