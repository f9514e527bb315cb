import { refreshSearch } from '../../integrations/search-refresh';
import type { JobDefinition } from '../types';

/** Hourly: the recent days of every completed Search Console import, re-imported (integrations/search-refresh.ts). */
export const SEARCH_REFRESH_QUEUE = 'search-refresh';

export const searchRefreshJob: JobDefinition<Record<string, never>> = {
  queue: SEARCH_REFRESH_QUEUE,
  defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: 10 },
  repeatEveryMs: 3_600_000,
  handler: (_payload, ctx) => refreshSearch(ctx),
};
