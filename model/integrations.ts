import { chToIso, chToMs, MetaTable, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { nowMs } from '../core/clock';
import { nextVersion } from '../core/ids';

/**
 * A site's provider connection (spec: "A site holds one connection") and the state of its backfill.
 * `backfill_counts` holds the provider's own counts (Stripe: payments, subscriptions; Search Console:
 * days, rows) and the units read (`pages`).
 * Credentials and the webhook secret are stored sealed (infra/secrets.ts) and never read back
 * through the API. Progress is written after every page, so GET /integrations shows it and a
 * restarted job resumes from `backfill_cursor`.
 */
export const BACKFILL_STATES = ['queued', 'running', 'completed', 'failed'] as const;
export type BackfillState = (typeof BACKFILL_STATES)[number];

export interface IntegrationRow {
  site_id: string; provider: string; account: string; credentials: string; webhook_secret: string; connected_at: string;
  backfill_state: BackfillState; backfill_counts: string; backfill_started_at: string | null;
  backfill_finished_at: string | null; backfill_error: string | null; backfill_cursor: string; backfill_job: string;
  /** Search Console: the console date of the last refresh that succeeded ('' before the first). */
  refreshed_through: string;
  /** Search Console: the first date the console still collected at the last read that said ('' unknown). */
  incomplete_from: string;
  webhook_last_at: string | null;
}

/** What this backfill has stored so far, by the provider's count names, and the units (pages, days) read. */
export type BackfillCounts = Record<string, number>;

/**
 * A fresh backfill generation, its counts at zero: its id is the BullMQ job id, stable for every
 * re-queue of it.
 */
export function queuedBackfill(siteId: string, countNames: readonly string[]): Pick<IntegrationRow,
  'backfill_state' | 'backfill_counts' | 'backfill_started_at' | 'backfill_finished_at' | 'backfill_error' | 'backfill_cursor' | 'backfill_job'
  | 'refreshed_through' | 'incomplete_from'> {
  const zero = Object.fromEntries([...countNames, 'pages'].map((name) => [name, 0]));
  return {
    backfill_state: 'queued', backfill_counts: JSON.stringify(zero), backfill_started_at: null,
    backfill_finished_at: null, backfill_error: null, backfill_cursor: '', backfill_job: `backfill-${siteId}-${nextVersion()}`,
    refreshed_through: '', incomplete_from: '',
  };
}

export class IntegrationRepo {
  readonly table: MetaTable<IntegrationRow>;

  constructor(store: Store) {
    this.table = new MetaTable(store, 'integrations', [
      'site_id', 'provider', 'account', 'credentials', 'webhook_secret', 'connected_at', 'backfill_state', 'backfill_counts',
      'backfill_started_at', 'backfill_finished_at', 'backfill_error', 'backfill_cursor', 'backfill_job', 'refreshed_through',
      'incomplete_from', 'webhook_last_at',
    ]);
  }

  get(siteId: string): Promise<IntegrationRow | undefined> {
    return this.table.one('site_id = {s:UUID}', { s: siteId });
  }

  /** Connections of the given sites, in a stable order. */
  list(siteIds: readonly string[]): Promise<IntegrationRow[]> {
    return this.table.select('site_id IN {s:Array(UUID)}', { s: [...siteIds] }, 'ORDER BY connected_at, site_id');
  }

  /** Backfills that should be running: the reconciler re-queues their jobs. */
  unfinished(): Promise<IntegrationRow[]> {
    return this.table.select("backfill_state IN ('queued', 'running')");
  }

  /** Connections of `provider` whose full import has completed: the ones a refresh keeps current. */
  imported(provider: string): Promise<IntegrationRow[]> {
    return this.table.select("provider = {p:String} AND backfill_state = 'completed'", { p: provider });
  }

  /**
   * `edit` on the stored row in the site's turn; the write is skipped when `edit` returns undefined.
   * Every change of a connection goes through here, so a backfill's progress, a webhook's arrival
   * and a re-sync never overwrite each other's fields.
   */
  update(siteId: string, edit: (row: IntegrationRow | undefined) => IntegrationRow | undefined | Promise<IntegrationRow | undefined>) {
    return this.table.exclusive(siteId, async () => {
      const next = await edit(await this.get(siteId));
      return next ? this.table.put(next) : undefined;
    });
  }

  /**
   * `write` in the site's turn, only while the connection's generation is still `job`; false (and
   * nothing written) once a re-sync, a re-key to another account or a disconnect replaced it (each
   * purge starts a new generation; a rolled key of the same account keeps it).
   */
  whileCurrent(siteId: string, job: string, write: () => Promise<void>): Promise<boolean> {
    return this.table.exclusive(siteId, async () => {
      if ((await this.get(siteId))?.backfill_job !== job) return false;
      await write();
      return true;
    });
  }

  remove(row: IntegrationRow): Promise<void> {
    return this.table.exclusive(row.site_id, () => this.table.remove(row));
  }

  /**
   * Noted on verified webhooks, shown as `webhook.last_received_at` to the minute: a burst of
   * notifications (a busy shop, a replay from Stripe's dashboard) writes the row once a minute, not a
   * metadata part per notification.
   */
  webhookArrived(siteId: string, row: IntegrationRow): Promise<IntegrationRow | undefined> {
    const last = row.webhook_last_at ? chToMs(row.webhook_last_at) : 0;
    if (nowMs() - last < WEBHOOK_NOTED_EVERY_MS) return Promise.resolve(row);
    return this.update(siteId, (stored) => stored && { ...stored, webhook_last_at: nowCh() });
  }
}

const WEBHOOK_NOTED_EVERY_MS = 60_000;

export function parseCounts(row: IntegrationRow): BackfillCounts {
  try {
    const stored = JSON.parse(row.backfill_counts) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(stored).map(([name, n]) => [name, Number(n) || 0]));
  } catch {
    return { pages: 0 };
  }
}

/** The row's counts with `added` added, as stored. */
export function addCounts(row: IntegrationRow, added: BackfillCounts): string {
  const counts = parseCounts(row);
  for (const [name, n] of Object.entries(added)) counts[name] = (counts[name] ?? 0) + n;
  return JSON.stringify(counts);
}

/** The connection as the API shows it: never a credential or secret, only whether one is set. */
export function integrationOut(row: IntegrationRow) {
  return {
    site_id: row.site_id,
    provider: row.provider,
    account: row.account || null,
    connected_at: chToIso(row.connected_at)!,
    webhook: { configured: row.webhook_secret !== '', last_received_at: chToIso(row.webhook_last_at) },
    backfill: {
      state: row.backfill_state,
      counts: parseCounts(row),
      started_at: chToIso(row.backfill_started_at),
      finished_at: chToIso(row.backfill_finished_at),
      error: row.backfill_error,
    },
  };
}
