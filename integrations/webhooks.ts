import Stripe from 'stripe';
import type { Store } from '../clickhouse/store';
import { AppError, notFound } from '../core/errors';
import { isUuid, nextVersion } from '../core/ids';
import type { SecretBox } from '../infra/secrets';
import { IntegrationRepo } from '../model/integrations';
import { CHARGE_EVENTS, STRIPE, chargeVersion, lifecycleKinds, lifecycleRow, paymentRow } from './stripe';

/**
 * POST /webhooks/stripe/{siteId}: Stripe's notifications for one connected site. The signature is
 * checked against the connection's webhook secret over the raw body (Stripe-Signature, 5 minutes'
 * tolerance) before anything is read. Handling is idempotent: a payment row is keyed by the charge,
 * a lifecycle row by its subscription (start, end) or event, so Stripe's retries and duplicates
 * change nothing. The event is stored before the 2xx: Stripe retries anything else, so an
 * acknowledged notification is never lost.
 */
export interface WebhookDeps {
  store: Store;
  secrets: SecretBox;
}

const badSignature = (why: string) => new AppError(400, 'invalid_signature', why);

export async function receiveWebhook(deps: WebhookDeps, provider: string, siteId: string, raw: Buffer, signature: string | undefined) {
  if (provider !== STRIPE || !isUuid(siteId)) throw notFound('webhook');
  const repo = new IntegrationRepo(deps.store);
  const row = await repo.get(siteId);
  if (!row || row.provider !== STRIPE || !row.webhook_secret) throw notFound('webhook');
  if (!signature) throw badSignature('The Stripe-Signature header is missing.');
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(raw, signature, deps.secrets.open(row.webhook_secret));
  } catch {
    throw badSignature('The Stripe-Signature header does not match this body and the webhook secret, or is older than 5 minutes.');
  }
  const stored = await storeEvent(deps.store, siteId, event);
  await repo.webhookArrived(siteId, row);
  return { received: true, type: event.type, stored };
}

/** Rows written for the event (0 for events that change neither a payment nor a lifecycle). */
async function storeEvent(store: Store, siteId: string, event: Stripe.Event): Promise<number> {
  if (CHARGE_EVENTS.has(event.type)) {
    const charge = event.data.object as Stripe.Charge;
    await store.insert('payments', [paymentRow(siteId, charge, chargeVersion(event, charge))]);
    return 1;
  }
  const kinds = lifecycleKinds(event);
  if (!kinds.length) return 0;
  const sub = event.data.object as Stripe.Subscription;
  const version = nextVersion();
  await store.insert('lifecycle_events', kinds.map((kind) => lifecycleRow(siteId, kind, sub.id, event.created, event.id, version)));
  return kinds.length;
}
