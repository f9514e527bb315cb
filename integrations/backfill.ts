import { UnrecoverableError } from 'bullmq';
import Stripe from 'stripe';
import type { Store } from '../clickhouse/store';
import { nextVersion } from '../core/ids';
import { nowCh } from '../clickhouse/meta';
import { IntegrationRepo, parseCounts, type BackfillCounts, type IntegrationRow } from '../model/integrations';
import type { Attempt, WorkerContext } from '../workers/types';
import { REBUILT_LIFECYCLE, openCredentials, paymentRow, stripeClient, subscriptionRows } from './stripe';

/**
 * The payment backfill: every charge the provider holds, then every subscription (their starts and
 * ends), newest first, a page at a time. After each page the rows are stored and then the cursor and
 * counts written, so a job that dies (process killed, Redis lost) resumes after the last stored page;
 * a page stored twice changes nothing (rows are keyed by the provider's ids). A backfill belongs to
 * one generation (`backfill_job`): once a re-sync or a disconnect replaces it, the old job stops at
 * its next page.
 */
export const BACKFILL_QUEUE = 'payment-backfill';
export const PAGE_SIZE = 100;

export interface BackfillPayload {
  siteId: string;
  job: string;
}

interface Page {
  ids: string[];
  hasMore: boolean;
  table: 'payments' | 'lifecycle_events';
  rows: object[];
}

/** The import's phases in order; the stored cursor is `<phase>:<last id>`. */
const PHASES = {
  charges: {
    counts: 'payments',
    async page(stripe: Stripe, siteId: string, after: string | undefined): Promise<Page> {
      const page = await stripe.charges.list({ limit: PAGE_SIZE, starting_after: after, expand: ['data.payment_intent'] });
      const version = nextVersion();
      return { ids: page.data.map((c) => c.id), hasMore: page.has_more, table: 'payments', rows: page.data.map((c) => paymentRow(siteId, c, version)) };
    },
  },
  subscriptions: {
    counts: 'subscriptions',
    async page(stripe: Stripe, siteId: string, after: string | undefined): Promise<Page> {
      const page = await stripe.subscriptions.list({ limit: PAGE_SIZE, status: 'all', starting_after: after });
      const version = nextVersion();
      return { ids: page.data.map((s) => s.id), hasMore: page.has_more, table: 'lifecycle_events', rows: page.data.flatMap((s) => subscriptionRows(siteId, s, version)) };
    },
  },
} satisfies Record<string, { counts: keyof BackfillCounts; page: (s: Stripe, site: string, after?: string) => Promise<Page> }>;
type Phase = keyof typeof PHASES;
const ORDER = Object.keys(PHASES) as Phase[];

function parseCursor(cursor: string): { phase: Phase; after: string | undefined } {
  const [phase, after] = cursor.split(':') as [Phase, string | undefined];
  return ORDER.includes(phase) ? { phase, after: after || undefined } : { phase: ORDER[0], after: undefined };
}

/** The provider will give the same answer on every retry: record the failure now. */
function permanent(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError ||
    err instanceof Stripe.errors.StripeInvalidRequestError;
}

function describe(err: unknown): string {
  if (err instanceof Stripe.errors.StripeAuthenticationError) return 'Stripe refused the secret key (revoked or rolled?); connect again with a valid key.';
  if (err instanceof Stripe.errors.StripePermissionError) return 'The key may not list charges or subscriptions; give a restricted key read access to them.';
  return `Stripe: ${(err as Error).message}`;
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
  try {
    if (!(await importPages(started, p, ctx, repo))) return;
    await repo.update(p.siteId, (row) => {
      const mine = ours(row);
      return mine && { ...mine, backfill_state: 'completed', backfill_finished_at: nowCh(), backfill_error: null };
    });
  } catch (err) {
    const final = permanent(err) || attempt.made + 1 >= attempt.max;
    await repo.update(p.siteId, (row) => {
      const mine = ours(row);
      return mine && { ...mine, backfill_state: final ? 'failed' : 'running', backfill_error: describe(err), ...(final ? { backfill_finished_at: nowCh() } : {}) };
    });
    throw permanent(err) ? new UnrecoverableError(describe(err)) : err;
  }
}

/** Pages from the stored cursor on; false when the generation was replaced meanwhile. */
async function importPages(start: IntegrationRow, p: BackfillPayload, ctx: WorkerContext, repo: IntegrationRepo): Promise<boolean> {
  const stripe = stripeClient(openCredentials(ctx.secrets, start).secret_key, ctx.config.stripeApiUrl);
  let { phase, after } = parseCursor(start.backfill_cursor);
  for (;;) {
    const page = await PHASES[phase].page(stripe, p.siteId, after);
    if (page.rows.length) await ctx.store.insert(page.table, page.rows);
    after = page.ids[page.ids.length - 1] ?? after;
    // Where a restart goes on: this phase after its last stored id, else the next phase from its start.
    const following = page.hasMore ? phase : ORDER[ORDER.indexOf(phase) + 1];
    const cursor = following === phase || following === undefined ? `${phase}:${after ?? ''}` : `${following}:`;
    const counted = PHASES[phase].counts;
    const alive = await repo.update(p.siteId, (row) => {
      if (!row || row.backfill_job !== p.job) return undefined;
      const counts = parseCounts(row);
      const next = { ...counts, [counted]: counts[counted] + page.ids.length, pages: counts.pages + 1 };
      return { ...row, backfill_cursor: cursor, backfill_counts: JSON.stringify(next) };
    });
    if (!alive) return false;
    if (following === undefined) return true;
    if (following !== phase) [phase, after] = [following, undefined];
  }
}

/**
 * What a re-sync clears before the full import: the site's stored payments of the provider and the
 * lifecycle events an import rebuilds (starts and ends). Written as tombstones (is_deleted = 1 at a
 * newer version) of exactly the rows stored now, read FINAL like every reader does, so the purge has
 * finished when the statement returns, on one node or a cluster alike.
 */
export async function purgeForResync(store: Store, siteId: string, provider: string): Promise<void> {
  const params = { s: siteId, p: provider, v: nextVersion(), k: [...REBUILT_LIFECYCLE] };
  const payments = store.table('payments');
  const payCols = 'site_id, provider, payment_id, visitor_id, session_id, amount_cents, refunded_cents, currency, status, paid_at';
  await store.command(
    `INSERT INTO ${payments} (${payCols}, version, is_deleted) SELECT ${payCols}, {v:UInt64}, 1 FROM ${payments} FINAL
     WHERE site_id = {s:UUID} AND provider = {p:String} AND is_deleted = 0`, params);
  const lifecycle = store.table('lifecycle_events');
  const lcCols = 'site_id, provider, event_id, kind, subscription_id, occurred_at';
  await store.command(
    `INSERT INTO ${lifecycle} (${lcCols}, version, is_deleted) SELECT ${lcCols}, {v:UInt64}, 1 FROM ${lifecycle} FINAL
     WHERE site_id = {s:UUID} AND provider = {p:String} AND kind IN {k:Array(String)} AND is_deleted = 0`, params);
}
