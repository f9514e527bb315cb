import type { JobDefinition } from './types';
import { alertsJob } from './jobs/alerts';
import { paymentBackfillJob } from './jobs/payment-backfill';
import { backfillReconcilerJob } from './jobs/backfill-reconciler';

/**
 * Every job kind the workers run. Add a job: write workers/jobs/<name>.ts exporting a JobDefinition and
 * list it here.
 */
export const JOBS: JobDefinition<any>[] = [];
JOBS.push(alertsJob);
JOBS.push(paymentBackfillJob);
JOBS.push(backfillReconcilerJob);
