import { BACKFILL_QUEUE, runBackfill, type BackfillPayload } from '../../integrations/backfill';
import type { JobDefinition } from '../types';

/**
 * One job per backfill generation of any provider (job id = `backfill_job`, so a repeat enqueue is a
 * no-op). Network failures are retried with backoff; the last failure, or a refusal the provider will
 * repeat (a revoked key), is recorded as `failed` with its error on GET /integrations.
 */
export const integrationBackfillJob: JobDefinition<BackfillPayload> = {
  queue: BACKFILL_QUEUE,
  defaultJobOptions: { attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: true, removeOnFail: 100 },
  concurrency: 2,
  handler: (payload, ctx, attempt) => runBackfill(payload, ctx, attempt),
};
