import Stripe from 'stripe';
import { z } from 'zod';
import type { Store } from '../clickhouse/store';
import { AppError, invalidRequest, notFound } from '../core/errors';
import { isUuid, nextVersion } from '../core/ids';
import { logger } from '../core/logger';
import type { SecretBox } from '../infra/secrets';
import { IntegrationRepo, type IntegrationRow } from '../model/integrations';
import { openCredentials } from './providers';
import { CHARGE_EVENTS, CHARGE_CUE_EVENTS, STRIPE, lifecycleKinds, lifecycleRow, lostDisputeCents, paymentRow, stripeClient, type StripeCredentials } from './stripe';

/**
 * POST /webhooks/stripe/{siteId}: Stripe's notifications for one connected site. The signature is
 * checked against the connection's webhook secret over the raw body (Stripe-Signature, 5 minutes'
 * tolerance) before anything is read. Handling is idempotent: a payment row is keyed by the charge,
 * a lifecycle row by its subscription (start, end) or event, so Stripe's retries and duplicates
 * change nothing. The event is stored before the 2xx: Stripe retries anything else, so an
 * acknowledged notification is never lost.
 *
 * A charge event is a cue, not the data: the charge is read back from Stripe (its PaymentIntent
 * expanded), as Stripe advises, because the event's copy names the PaymentIntent by id only, so the
 * checkout's visitor ids Checkout puts there would be lost (and a refund would detach revenue already
 * attributed), and because deliveries arrive out of order. The row's version is the time of that read,
 * on the clock the backfill's versions use, so whichever read Stripe later wins, whatever the order of
 * the writes.
 */
export interface WebhookDeps {
  store: Store;
  secrets: SecretBox;
  config: { stripeApiUrl?: URL };
}

const badSignature = (why: string) => new AppError(400, 'invalid_signature', why);

/** Stripe's first charges are from 2010: a `created` outside 2000-2100 is not a Stripe event's. */
const Y2000 = 946_684_800;
const Y2100 = 4_102_444_800;

/**
 * What every handled event needs, checked before any of it is read: a signed body (Stripe's, or one
 * made with a leaked secret) that is not an event is the sender's 400, not a 500 that Stripe would
 * redeliver for days. Each kind's own fields are checked where they are read.
 */
const EventEnvelope = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  created: z.number().int().min(Y2000).max(Y2100),
  data: z.looseObject({ object: z.looseObject({}), previous_attributes: z.looseObject({}).optional() }),
});

function envelopeOf(event: unknown): Stripe.Event {
  const checked = EventEnvelope.safeParse(event);
  if (checked.success) return event as Stripe.Event;
  const issue = checked.error.issues[0];
  const why = issue.code === 'invalid_type' ? 'is missing or of the wrong type' : issue.code === 'too_small' && issue.origin === 'string' ? 'is empty' : 'is out of range';
  throw invalidRequest(`The body is not a Stripe event: ${issue.path.join('.') || 'the body'} ${why}.`);
}

/** How far a signature may be from this server's clock, either way (stripe-node's default age limit, given to it). */
const WEBHOOK_TOLERANCE_S = 300;

/**
 * stripe-node refuses a signature older than its tolerance but not one dated ahead: a body signed for
 * a later time would stay replayable until then. Ahead by more than the same 5 minutes is refused.
 * Date.now, the clock stripe-node reads for the age check, not core/clock.
 */
function signedAhead(signature: string): boolean {
  const t = /(?:^|,)\s*t=(\d+)/.exec(signature);
  return !!t && Number(t[1]) * 1000 > Date.now() + WEBHOOK_TOLERANCE_S * 1000;
}

export async function receiveWebhook(deps: WebhookDeps, provider: string, siteId: string, raw: Buffer, signature: string | undefined) {
  if (provider !== STRIPE || !isUuid(siteId)) throw notFound('webhook');
  const repo = new IntegrationRepo(deps.store);
  const row = await repo.get(siteId);
  if (!row || row.provider !== STRIPE || !row.webhook_secret) throw notFound('webhook');
  if (!signature) throw badSignature('The Stripe-Signature header is missing.');
  let parsed: unknown;
  try {
    parsed = Stripe.webhooks.constructEvent(raw, signature, deps.secrets.open(row.webhook_secret), WEBHOOK_TOLERANCE_S);
  } catch (err) {
    // The signature is checked before the body is parsed: anything else is a signed body that is not JSON.
    if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw invalidRequest('The body is not JSON: not a Stripe event.');
    throw badSignature('The Stripe-Signature header does not match this body and the webhook secret, or is older than 5 minutes.');
  }
  if (signedAhead(signature)) throw badSignature('The Stripe-Signature header is dated more than 5 minutes ahead of this server\'s clock.');
  const event = envelopeOf(parsed);
  const stored = await storeEvent(deps, row, event);
  await repo.webhookArrived(siteId, row);
  return { received: true, type: event.type, stored };
}

const SUBSCRIPTION_EVENT = 'customer.subscription.';

/** The id of the event's object: a signed event without one is malformed (400, never a 500). */
function objectId(event: Stripe.Event): string {
  const object = (event.data as { object?: unknown } | undefined)?.object as { id?: unknown } | undefined;
  if (typeof object?.id !== 'string' || !object.id) throw invalidRequest(`The ${event.type} event carries no object id.`);
  return object.id;
}

/**
 * The charge a dispute or refund event is about (`charge`, an id or, expanded, the charge). A refund's
 * `charge` is null when it refunds no charge (a customer balance refund, say): nothing of ours changes,
 * so it is acknowledged with nothing stored (a 400 would have Stripe redeliver it for days). A dispute
 * always names its charge, and an event without the field at all is malformed.
 */
function cuedChargeId(event: Stripe.Event): string | null {
  const object = (event.data as { object?: { object?: unknown; charge?: unknown } } | undefined)?.object;
  const charge = object?.charge;
  if (charge === null && object?.object === 'refund') return null;
  const id = typeof charge === 'object' && charge ? (charge as { id?: unknown }).id : charge;
  if (typeof id !== 'string' || !id) throw invalidRequest(`The ${event.type} event names no charge.`);
  return id;
}

/** Rows written for the event (0 for events that change neither a payment nor a lifecycle). */
async function storeEvent(deps: WebhookDeps, row: IntegrationRow, event: Stripe.Event): Promise<number> {
  if (CHARGE_EVENTS.has(event.type)) return storeCharge(deps, row, objectId(event));
  if (CHARGE_CUE_EVENTS.has(event.type)) {
    const chargeId = cuedChargeId(event);
    return chargeId ? storeCharge(deps, row, chargeId) : 0;
  }
  if (!event.type.startsWith(SUBSCRIPTION_EVENT)) return 0;
  const subscriptionId = objectId(event);
  const kinds = lifecycleKinds(event);
  if (!kinds.length) return 0;
  const version = nextVersion();
  const rows = kinds.map((kind) => lifecycleRow(row.site_id, kind, subscriptionId, event.created, event.id, version));
  return (await stillConnected(deps, row, () => deps.store.insert('lifecycle_events', rows))) ? kinds.length : 0;
}

/**
 * Writes what the notification brought in the site's turn, only while no purge came since the request
 * read the connection (the same generation, as an import's units are written): a charge read from
 * account A while the site was re-keyed to account B (or disconnected and connected to B) was written
 * after B's purge, and the two accounts' revenue was summed until a re-sync. The notification is then
 * acknowledged with nothing stored: its connection is gone, or a re-sync's import reads the charge
 * again. A rolled key of the same account keeps the generation, so its notifications are stored.
 */
async function stillConnected(deps: WebhookDeps, row: IntegrationRow, write: () => Promise<void>): Promise<boolean> {
  const written = await new IntegrationRepo(deps.store).whileCurrent(row.site_id, row.backfill_job, write);
  if (!written) logger.warn({ site: row.site_id }, 'stripe webhook: the connection was purged meanwhile (re-key, re-sync or disconnect); not stored');
  return written;
}

/**
 * Why the charge could not be read. A key Stripe refuses (rolled, or a restricted key without read
 * access to disputes, connected before they were read) is the operator's to fix, so it is logged as
 * an error; the notification is still not acknowledged, so Stripe's redelivery stores it once the
 * connection is re-keyed.
 */
function unreadable(err: unknown, siteId: string): string {
  if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError) {
    logger.error({ site: siteId, err: (err as Error).message }, 'stripe webhook: Stripe refused the connection\'s key; re-key the connection');
    return 'Stripe refused the connection\'s key (revoked, or without read access to charges and disputes); re-key the connection and Stripe\'s redelivery will be stored.';
  }
  return 'Stripe could not be reached to read the charge; deliver the event again later.';
}

const WEBHOOK_CALLS = { maxNetworkRetries: 0, timeout: 5_000 };

/**
 * The charge as Stripe has it now, with what lost disputes took of it. Stripe unreachable (or
 * refusing the key) is 503: the notification is not acknowledged and Stripe delivers it again later.
 * A charge the key cannot see (another account's or mode's) is acknowledged and stores nothing.
 */
async function storeCharge(deps: WebhookDeps, row: IntegrationRow, chargeId: string): Promise<number> {
  const { secret_key } = openCredentials<StripeCredentials>(deps.secrets, row);
  // One short try: Stripe waits for this answer and redelivers a 503 later, so retrying here (the
  // import's 2 retries of 20 s) would only hold its delivery for a minute.
  const stripe = stripeClient(secret_key, deps.config.stripeApiUrl, WEBHOOK_CALLS);
  const version = nextVersion();
  let charge: Stripe.Charge;
  let lost: number;
  try {
    charge = await stripe.charges.retrieve(chargeId, { expand: ['payment_intent'] });
    lost = await lostDisputeCents(stripe, charge);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode === 404) {
      logger.warn({ site: row.site_id, charge: chargeId }, 'stripe webhook: the connected key cannot see this charge; ignored');
      return 0;
    }
    throw new AppError(503, 'provider_unavailable', unreadable(err, row.site_id), undefined, { 'Retry-After': '60' });
  }
  return (await stillConnected(deps, row, () => deps.store.insert('payments', [paymentRow(row.site_id, charge, version, lost)]))) ? 1 : 0;
}
