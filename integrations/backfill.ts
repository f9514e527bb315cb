import { UnrecoverableError } from 'bullmq';
import { nowCh } from '../clickhouse/meta';
import { IntegrationRepo, addCounts, type IntegrationRow } from '../model/integrations';
import type { Attempt, WorkerContext } from '../workers/types';
import { openCredentials, providerNamed } from './providers';

/**
 * The backfill driver, the same for every provider: a connection's full import runs as one job per
 * generation (`backfill_job`). The provider reads a unit of work (a page, a day) and hands its write,
 * cursor and counts to `progress`, which writes and records them in the site's turn while the
 * generation is current; so a job that dies (process killed, Redis lost) resumes after the last stored
 * unit, a unit stored twice changes nothing (rows are keyed by the provider's ids), and once a
 * re-sync, a re-key or a disconnect replaces the generation the old job stops with nothing written.
 */
export const BACKFILL_QUEUE = 'integration-backfill';

export interface BackfillPayload {
  siteId: string;
  job: string;
}

export async function runBackfill(p: BackfillPayload, ctx: WorkerContext, attempt: Attempt): Promise<void> {
  const repo = new IntegrationRepo(ctx.store);
  const ours = (row: IntegrationRow | undefined) => (row && row.backfill_job === p.job ? row : undefined);
  const started = await repo.update(p.siteId, (row) => {
    const mine = ours(row);
    if (!mine || mine.backfill_state === 'completed') return undefined;
    return { ...mine, backfill_state: 'running', backfill_started_at: mine.backfill_started_at ?? nowCh(), backfill_error: null };
  });
  if (!started) return; // disconnected, superseded by a re-sync, or already done
  const provider = providerNamed(started.provider);
  try {
    const finished = await provider.importAll({
      siteId: p.siteId, row: started, ctx, credentials: openCredentials(ctx.secrets, started),
      progress: async (cursor, added, write) => Boolean(await repo.update(p.siteId, async (row) => {
        const mine = ours(row);
        if (!mine) return undefined;
        await write();
        return { ...mine, backfill_cursor: cursor, backfill_counts: addCounts(mine, { pages: 1, ...added }) };
      })),
    });
    if (!finished) return;
    await repo.update(p.siteId, (row) => {
      const mine = ours(row);
      return mine && { ...mine, backfill_state: 'completed', backfill_finished_at: nowCh(), backfill_error: null };
    });
  } catch (err) {
    const permanent = provider.permanent(err);
    const final = permanent || attempt.made + 1 >= attempt.max;
    await repo.update(p.siteId, (row) => {
      const mine = ours(row);
      return mine && { ...mine, backfill_state: final ? 'failed' : 'running', backfill_error: provider.describe(err), ...(final ? { backfill_finished_at: nowCh() } : {}) };
    });
    throw permanent ? new UnrecoverableError(provider.describe(err)) : err;
  }
}
