import { z } from 'zod';
import { notFound } from '../../core/errors';
import { seedEvents } from '../../ingest/seed/seed';
import { addCommands, define, uuid } from './commands';

/** `tally seed --site S --events N --days D [--seed S]`: prints {inserted}. */
addCommands({
  seed: define({
    args: z.object({
      site: uuid('site', 'site uuid'),
      events: z.coerce.number({ error: '--events must be a number' }).int('--events must be a whole number')
        .min(1, '--events must be at least 1').max(1_000_000_000, '--events must be at most 1000000000'),
      days: z.coerce.number({ error: '--days must be a number' }).int('--days must be a whole number')
        .min(1, '--days must be at least 1').max(3650, '--days must be at most 3650'),
      seed: z.coerce.number({ error: '--seed must be a number' }).int('--seed must be a whole number')
        .min(0, '--seed must be 0 or more').max(2 ** 53, '--seed must be at most 2^53').default(1),
    }),
    async run(ctx, a) {
      const site = await ctx.repos.getSite(a.site);
      if (!site) throw notFound('site');
      return seedEvents(ctx.store, site, { events: a.events, days: a.days, seed: a.seed });
    },
  }),
});
