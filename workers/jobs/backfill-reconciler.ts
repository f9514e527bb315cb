import { logger } from '../../core/logger';
import { BACKFILL_QUEUE, type BackfillPayload } from '../../integrations/backfill';
import { IntegrationRepo } from '../../model/integrations';
import type { JobDefinition } from '../types';

/**
 * Redis here keeps nothing on disk, so a restart loses queued jobs; the state of every backfill lives
 * in ClickHouse. Every minute, each backfill still `queued` or `running` is queued again under its
 * own job id: a no-op while its job exists, a restart (from its stored cursor) when Redis lost it.
 */
export const backfillReconcilerJob: JobDefinition<Record<string, never>> = {
  queue: 'backfill-reconciler',
  defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: 10 },
  repeatEveryMs: 60_000,
  async handler(_payload, ctx) {
    const rows = await new IntegrationRepo(ctx.store).unfinished();
    for (const row of rows) {
      const payload: BackfillPayload = { siteId: row.site_id, job: row.backfill_job };
      await ctx.enqueue(BACKFILL_QUEUE, payload, row.backfill_job).catch((err: Error) =>
        logger.warn({ err: err.message, site: row.site_id }, 'could not re-queue a backfill'));
    }
    return rows.length;
  },
};
