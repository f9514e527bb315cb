import type { JobDefinition } from './types';
import { alertsJob } from './jobs/alerts';
import { alertDeliveryJob } from './jobs/alert-delivery';
import { integrationBackfillJob } from './jobs/integration-backfill';
import { searchRefreshJob } from './jobs/search-refresh';
import { backfillReconcilerJob } from './jobs/backfill-reconciler';
import { retentionPurgeJob } from './jobs/retention-purge';

/**
 * Every job kind the workers run. Add a job: write workers/jobs/<name>.ts exporting a JobDefinition and
 * list it here.
 */
export const JOBS: JobDefinition<any>[] = [];
JOBS.push(alertsJob);
JOBS.push(alertDeliveryJob);
JOBS.push(integrationBackfillJob);
JOBS.push(backfillReconcilerJob);
JOBS.push(searchRefreshJob);
JOBS.push(retentionPurgeJob);
