import Stripe from 'stripe';
import { AppError, invalidRequest, notFound, queueUnavailable } from '../core/errors';
import type { SecretBox } from '../infra/secrets';
import type { Config } from '../core/config';
import type { Store } from '../clickhouse/store';
import { nowCh } from '../clickhouse/meta';
import { IntegrationRepo, queuedBackfill, type IntegrationRow } from '../model/integrations';
import type { Queues } from '../workers/queues';
import { BACKFILL_QUEUE, purgeForResync, type BackfillPayload } from './backfill';
import { STRIPE, sealCredentials, stripeClient } from './stripe';

/**
 * The use cases behind /sites/{id}/integrations: connect, disconnect, re-sync. A site holds one
 * connection (spec). Providers: `stripe` (payments). Search Console rows are read by the search
 * reports, but connecting it through the API is not built yet (docs/RESOURCES.md).
 */
export const PROVIDERS = [STRIPE] as const;

export interface IntegrationDeps {
  store: Store;
  config: Config;
  secrets: SecretBox;
  queues: Queues;
}

export interface StripeConnectInput {
  secret_key: string;
  webhook_secret?: string;
}

const unknownProvider = (provider: string) =>
  new AppError(404, 'not_found', `There is no integration provider "${provider}"; providers: ${PROVIDERS.join(', ')}.`);

function assertProvider(provider: string): void {
  if (!(PROVIDERS as readonly string[]).includes(provider)) throw unknownProvider(provider);
}

/** The key must list charges (all a backfill does): a wrong key is the caller's 400, an unreachable Stripe a 503. */
async function verifyStripeKey(key: string, apiUrl?: URL): Promise<void> {
  try {
    await stripeClient(key, apiUrl).charges.list({ limit: 1 });
  } catch (err) {
    if (err instanceof Stripe.errors.StripeAuthenticationError) throw invalidRequest('secret_key: Stripe refused this key.');
    if (err instanceof Stripe.errors.StripePermissionError) {
      throw invalidRequest('secret_key: this key may not read charges; a restricted key needs read access to Charges and PaymentIntents.');
    }
    throw new AppError(503, 'provider_unavailable', 'Stripe could not be reached to check the key; try again shortly.', undefined, { 'Retry-After': '30' });
  }
}

/** Queue a generation's job; while Redis is away the reconciler queues it later (the state is stored). */
async function queueBackfill(deps: IntegrationDeps, row: IntegrationRow): Promise<void> {
  const payload: BackfillPayload = { siteId: row.site_id, job: row.backfill_job };
  await deps.queues.enqueue(BACKFILL_QUEUE, payload, row.backfill_job).catch(() => undefined);
}

/**
 * Connect (or re-key) the site's provider. A new connection queues a full backfill; re-keying the same
 * provider keeps the import's state, and re-queues it if it had failed (a revoked key is the usual
 * cause). The table holds one row per site (spec: a site holds one connection); with Stripe the only
 * provider there is nothing else to refuse yet.
 */
export async function connect(deps: IntegrationDeps, siteId: string, provider: string, input: StripeConnectInput): Promise<IntegrationRow> {
  assertProvider(provider);
  const repo = new IntegrationRepo(deps.store);
  await verifyStripeKey(input.secret_key, deps.config.stripeApiUrl);
  const sealed = {
    credentials: sealCredentials(deps.secrets, { secret_key: input.secret_key }),
    webhook_secret: input.webhook_secret ? deps.secrets.seal(input.webhook_secret) : '',
  };
  let requeue = false;
  const row = await repo.update(siteId, (stored) => {
    const same = stored?.provider === provider ? stored : undefined;
    requeue = !same || same.backfill_state === 'failed';
    const fresh = { site_id: siteId, provider, connected_at: nowCh(), webhook_last_at: null };
    return {
      ...(same ?? fresh),
      ...(requeue ? queuedBackfill(siteId) : {}),
      credentials: sealed.credentials,
      // Re-keying without a webhook secret keeps the one set before.
      webhook_secret: sealed.webhook_secret || same?.webhook_secret || '',
    } as IntegrationRow;
  });
  if (requeue) await queueBackfill(deps, row!);
  return row!;
}

/** The site's connection to `provider`, or 404 (also when it is connected to another provider). */
export async function connectionOf(store: Store, siteId: string, provider: string): Promise<IntegrationRow> {
  const row = await new IntegrationRepo(store).get(siteId);
  if (!row || row.provider !== provider) throw notFound(`${provider} connection`);
  return row;
}

/** Disconnect: the credentials and webhook secret are dropped; payments already stored stay. */
export async function disconnect(store: Store, siteId: string, provider: string): Promise<void> {
  await new IntegrationRepo(store).remove(await connectionOf(store, siteId, provider));
}

/**
 * Re-sync (spec, "Import (backfill)"): stored payments and the subscription start and end events are
 * cleared, the purge finishes, then a full import from the beginning is queued as a new generation.
 * The connection, webhook and secret stay. Redis is checked first: a purge without a queued import
 * would leave the site without payments until someone noticed.
 */
export async function resync(deps: IntegrationDeps, siteId: string, provider: string): Promise<IntegrationRow> {
  const row = await new IntegrationRepo(deps.store).update(siteId, async (stored) => {
    if (!stored || stored.provider !== provider) throw notFound(`${provider} connection`);
    if (!deps.queues.available()) throw queueUnavailable();
    // In the site's turn, so no progress of the old generation is written over the new one. A page the
    // old job was already storing may land after the purge: the new import stores the same charges
    // again under the same keys, so nothing is counted twice.
    await purgeForResync(deps.store, siteId, provider);
    return { ...stored, ...queuedBackfill(siteId) };
  });
  await queueBackfill(deps, row!);
  return row!;
}
