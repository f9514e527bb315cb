import type { JobDefinition } from './types';
import { alertsJob } from './jobs/alerts';

/**
 * Every job kind the workers run. Add a job: write workers/jobs/<name>.ts exporting a JobDefinition and
 * list it here.
 */
export const JOBS: JobDefinition<any>[] = [];
JOBS.push(alertsJob);
