import { chToMs } from '../clickhouse/meta';
import { nowMs } from '../core/clock';
import { logger } from '../core/logger';
import { IntegrationRepo, type IntegrationRow } from '../model/integrations';
import { SEARCH_PROVIDER } from '../query/lower/search';
import type { WorkerContext } from '../workers/types';
import { openCredentials } from './providers';
import { consoleDate, dayTotals, noteIncomplete, readDay, oldestNotFinal, retentionStart, searchClient, shiftDate, type SearchCredentials } from './search-console';
import { searchConsoleProvider } from './search-provider';

/**
 * After the full import, the console's recent days keep changing: a day appears about two days late
 * and is final about a day after that. A refresh re-imports, whole, every day from today back to the
 * oldest day stored as not final, and at least the last REFRESH_DAYS days (so a day that gained its
 * first impressions late is picked up, and one that lost them is cleared) counted back from the last
 * refresh that succeeded (or the import's start): days that arrived while refreshes failed or did not
 * run (a revoked key, Google down, workers stopped for more than REFRESH_DAYS) were never read, and a
 * range counted from today alone skipped them for good.
 */
export const REFRESH_DAYS = 5;

/** Refresh every completed Search Console import; returns how many connections were visited. */
export async function refreshSearch(ctx: WorkerContext): Promise<number> {
  const repo = new IntegrationRepo(ctx.store);
  const rows = await repo.imported(SEARCH_PROVIDER);
  for (const row of rows) {
    await refreshSite(ctx, repo, row).catch((err: Error) => logger.warn({ err: err.message, site: row.site_id }, 'search console refresh failed; next run retries'));
  }
  return rows.length;
}

async function refreshSite(ctx: WorkerContext, repo: IntegrationRepo, row: IntegrationRow): Promise<void> {
  const c = openCredentials<SearchCredentials>(ctx.secrets, row);
  const sc = searchClient(c, ctx.config.googleApiUrl);
  const today = consoleDate(nowMs());
  const first = await firstDayToRead(ctx, row, today);
  let error: string | null = null;
  try {
    const totals = await dayTotals(sc, c.property, first, today);
    // The console's word on what it still collects (`partial`) holds before the days are read again.
    await noteIncomplete(repo, row, totals);
    for (let day = today; day >= first; day = shiftDate(day, -1)) {
      const done = await readDay(sc, ctx.store, row.site_id, c.property, day, totals);
      // Written only while the connection is the one this refresh read for (not re-keyed meanwhile).
      if (!(await repo.whileCurrent(row.site_id, row.backfill_job, done.write))) return;
    }
  } catch (err) {
    // An outage is retried by the next run; a refusal (revoked key, access removed) is shown on
    // GET /integrations until a refresh succeeds again.
    if (!searchConsoleProvider.permanent(err)) throw err;
    error = searchConsoleProvider.describe(err);
  }
  await repo.update(row.site_id, (stored) => {
    const same = stored && stored.backfill_job === row.backfill_job && stored.backfill_state === 'completed';
    if (!same) return undefined;
    const through = error === null ? today : stored.refreshed_through;
    return stored.backfill_error !== error || stored.refreshed_through !== through ? { ...stored, backfill_error: error, refreshed_through: through } : undefined;
  });
}

/**
 * The oldest of: the oldest day stored as not final, REFRESH_DAYS back from today, and REFRESH_DAYS
 * back from the last successful refresh (the import's first day before any), never before the
 * console keeps data.
 */
async function firstDayToRead(ctx: WorkerContext, row: IntegrationRow, today: string): Promise<string> {
  const back = (day: string) => shiftDate(day, -(REFRESH_DAYS - 1));
  const since = row.refreshed_through || (row.backfill_started_at ? consoleDate(chToMs(row.backfill_started_at)) : today);
  const oldest = await oldestNotFinal(ctx.store, row.site_id);
  const candidates = [back(today), back(since), ...(oldest ? [oldest] : [])].sort();
  const floor = retentionStart(today);
  return candidates[0] < floor ? floor : candidates[0];
}
