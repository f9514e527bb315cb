import { z } from 'zod';
import { notFound } from '../../core/errors';
import { seedEvents } from '../../ingest/seed/seed';
import { addCommands, define, uuid, wholeNumber } from './commands';

/** `tally seed --site S --events N --days D [--seed S]`: prints {inserted}. */
addCommands({
  seed: define({
    args: z.object({
      site: uuid('site', 'site uuid'),
      events: wholeNumber(1, 1_000_000_000),
      days: wholeNumber(1, 3650),
      seed: wholeNumber(0, Number.MAX_SAFE_INTEGER).optional().transform((v) => v ?? 1),
    }),
    async run(ctx, a, _body, shutdown) {
      const site = await ctx.repos.getSite(a.site);
      if (!site) throw notFound('site');
      return seedEvents(ctx.store, site, { events: a.events, days: a.days, seed: a.seed, signal: shutdown });
    },
  }),
});
