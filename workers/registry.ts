import type { JobDefinition } from './types';
import { alertsJob } from './jobs/alerts';
import { integrationBackfillJob } from './jobs/integration-backfill';
import { searchRefreshJob } from './jobs/search-refresh';
import { backfillReconcilerJob } from './jobs/backfill-reconciler';

/**
 * Every job kind the workers run. Add a job: write workers/jobs/<name>.ts exporting a JobDefinition and
 * list it here.
 */
export const JOBS: JobDefinition<any>[] = [];
JOBS.push(alertsJob);
JOBS.push(integrationBackfillJob);
JOBS.push(backfillReconcilerJob);
JOBS.push(searchRefreshJob);
