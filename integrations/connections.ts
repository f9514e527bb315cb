import type { Config } from '../core/config';
import { AppError, conflict, notFound, queueUnavailable } from '../core/errors';
import type { SecretBox } from '../infra/secrets';
import type { Store } from '../clickhouse/store';
import { nowCh } from '../clickhouse/meta';
import { IntegrationRepo, queuedBackfill, type IntegrationRow } from '../model/integrations';
import type { Queues } from '../workers/queues';
import { BACKFILL_QUEUE, type BackfillPayload } from './backfill';
import type { Provider } from './provider';
import { openCredentials, providerNamed, sealCredentials } from './providers';

/**
 * The use cases behind /sites/{id}/integrations: connect, disconnect, re-sync, the same for every
 * provider (providers.ts). A site holds one connection (spec).
 */
export interface IntegrationDeps {
  store: Store;
  config: Config;
  secrets: SecretBox;
  queues: Queues;
}

/** Queue a generation's job; while Redis is away the reconciler queues it later (the state is stored). */
async function queueBackfill(deps: IntegrationDeps, row: IntegrationRow): Promise<void> {
  const payload: BackfillPayload = { siteId: row.site_id, job: row.backfill_job };
  await deps.queues.enqueue(BACKFILL_QUEUE, payload, row.backfill_job).catch(() => undefined);
}

/**
 * Connect (or re-key) the site's provider with its body (validated by the route against the
 * provider's schema); the credentials are checked live before anything is stored. A connection to
 * an account other than the stored data's is a re-sync: a new connection (imported data outlives a
 * disconnect, and may be another property's or account's) or a re-key to another account (another
 * Search Console property; a Stripe key whose newest charge the site does not hold) clears what the
 * provider stored for the site, drops the old account's webhook secret unless a new one is given, and
 * queues a full import, so two accounts' figures are never summed. As on a connect while Redis is
 * down, the reconciler queues that import once Redis is back. Re-keying the same account (a rolled
 * key, adding the webhook secret) keeps the import's state, and re-queues it if it had failed (a
 * revoked key is the usual cause). A site connected to another provider is 409: connecting would
 * silently drop that connection's credentials, so it is disconnected first, on purpose.
 */
export async function connect<I>(deps: IntegrationDeps, siteId: string, provider: Provider<I>, input: I): Promise<IntegrationRow> {
  const repo = new IntegrationRepo(deps.store);
  // Refused before the provider is called, and again in the site's turn below.
  refuseOtherProvider(await repo.get(siteId), provider.name);
  const credentials = provider.credentials(input);
  const witness = await provider.verify(credentials, deps.config);
  const account = provider.account(input);
  const sameAccount = async (stored: IntegrationRow) =>
    stored.account === account || (witness !== undefined && (await provider.holds?.(deps.store, siteId, witness)) === true);
  const webhookSecret = provider.webhookSecret(input);
  const sealed = {
    credentials: sealCredentials(deps.secrets, credentials),
    webhook_secret: webhookSecret ? deps.secrets.seal(webhookSecret) : '',
  };
  let requeue = false;
  const row = await repo.update(siteId, async (stored) => {
    refuseOtherProvider(stored, provider.name);
    const same = stored?.provider === provider.name ? stored : undefined;
    const otherData = !same || !(await sameAccount(same));
    requeue = otherData || same.backfill_state === 'failed';
    // In the site's turn, as a re-sync purges: the old generation's job stops at its next unit.
    if (otherData) await provider.purge(deps.store, siteId);
    const fresh = { site_id: siteId, provider: provider.name, connected_at: nowCh(), webhook_last_at: null };
    return {
      ...(same ?? fresh),
      ...(requeue ? queuedBackfill(siteId, provider.counts) : {}),
      account,
      credentials: sealed.credentials,
      // Re-keying the same account without a webhook secret keeps the one set before; another
      // account's endpoint secret would let its notifications in.
      webhook_secret: sealed.webhook_secret || (otherData ? '' : same?.webhook_secret ?? ''),
    } as IntegrationRow;
  });
  if (requeue) await queueBackfill(deps, row!);
  return row!;
}

function refuseOtherProvider(stored: IntegrationRow | undefined, provider: string): void {
  if (stored && stored.provider !== provider) {
    throw conflict('conflict', `This site is connected to ${stored.provider}, and a site holds one connection: disconnect it first (DELETE /sites/{siteId}/integrations/${stored.provider}).`);
  }
}

/** The site's connection to `provider`, or 404 (also when it is connected to another provider). */
export async function connectionOf(store: Store, siteId: string, provider: string): Promise<IntegrationRow> {
  providerNamed(provider); // an unknown name is told which providers there are
  const row = await new IntegrationRepo(store).get(siteId);
  if (!row || row.provider !== provider) throw notFound(`${provider} connection`);
  return row;
}

/** Disconnect: the credentials and webhook secret are dropped; imported data stays. */
export async function disconnect(store: Store, siteId: string, provider: string): Promise<void> {
  await new IntegrationRepo(store).remove(await connectionOf(store, siteId, provider));
}

/**
 * The stored credentials are checked live before a re-sync clears anything: a revoked key or a
 * withdrawn property access would otherwise empty the figures and fail the import, leaving zeros until
 * someone re-keyed. Refused (409, nothing cleared) naming what the provider said; an outage is its 503.
 */
async function credentialsStillWork(deps: IntegrationDeps, p: Provider, row: IntegrationRow): Promise<void> {
  try {
    await p.verify(openCredentials(deps.secrets, row), deps.config);
  } catch (err) {
    if (!(err instanceof AppError) || err.status !== 400) throw err;
    throw conflict('credentials_refused',
      `${p.label} refused the stored credentials (${err.message}); nothing was cleared. Connect again with working ones (PUT /sites/{siteId}/integrations/${p.name}), then re-sync.`);
  }
}

/**
 * Re-sync (spec, "Import (backfill)"): what the provider's import stored is cleared, the purge
 * finishes, then a full import from the beginning is queued as a new generation. The connection,
 * webhook and secret stay. Redis is checked first: a purge without a queued import would leave the
 * site without its data until someone noticed.
 */
export async function resync(deps: IntegrationDeps, siteId: string, provider: string): Promise<IntegrationRow> {
  const p = providerNamed(provider);
  const connected = await connectionOf(deps.store, siteId, provider);
  // The cheap refusal first: with Redis down no provider call is made (checked again in the turn).
  if (!deps.queues.available()) throw queueUnavailable();
  await credentialsStillWork(deps, p, connected);
  const row = await new IntegrationRepo(deps.store).update(siteId, async (stored) => {
    if (!stored || stored.provider !== provider) throw notFound(`${provider} connection`);
    if (!deps.queues.available()) throw queueUnavailable();
    // In the site's turn (shared with the worker's process in server mode): the old generation's units
    // (and webhooks read before) are written in the turn and only while current, so none lands after
    // the purge.
    await p.purge(deps.store, siteId);
    return { ...stored, ...queuedBackfill(siteId, p.counts) };
  });
  await queueBackfill(deps, row!);
  return row!;
}
