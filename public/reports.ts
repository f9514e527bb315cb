import { AppError } from '../core/errors';
import type { RunReport } from './share-data';

/**
 * The one place the public pages and the alert worker take their figures from: the query helper's
 * runReport. TRANSITIONAL: query/index.ts is not on main yet; until it is, figure requests answer 503.
 */
export const runReport: RunReport = async () => {
  throw new AppError(503, 'queue_unavailable', 'Reports are not available yet.');
};
