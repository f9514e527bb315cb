import Stripe from 'stripe';
import { isoToCh } from '../clickhouse/meta';

/**
 * Stripe through its official client: charges become payment rows, subscription events become
 * lifecycle events. TALLY_STRIPE_API_URL points the client at a Stripe-compatible server (the tests'
 * double, or stripe-mock); unset, it talks to api.stripe.com.
 */
export const STRIPE = 'stripe';

/** Imports retry and wait; a webhook reads within Stripe's own delivery, which Stripe redelivers (see webhooks.ts). */
export interface StripeCalls { maxNetworkRetries: number; timeout: number }
const IMPORT_CALLS: StripeCalls = { maxNetworkRetries: 2, timeout: 20_000 };

export function stripeClient(secretKey: string, apiUrl?: URL, calls: StripeCalls = IMPORT_CALLS): Stripe {
  const target = apiUrl
    ? {
      host: apiUrl.hostname,
      port: Number(apiUrl.port || (apiUrl.protocol === 'https:' ? 443 : 80)),
      protocol: apiUrl.protocol === 'https:' ? ('https' as const) : ('http' as const),
    }
    : {};
  return new Stripe(secretKey, { ...target, ...calls, telemetry: false });
}

/** What a Stripe connection is made with, sealed as JSON in `credentials`. */
export interface StripeCredentials {
  secret_key: string;
}

/** A row of the `payments` table. */
export interface PaymentRow {
  site_id: string; provider: string; payment_id: string; visitor_id: string; session_id: string; amount_cents: number;
  refunded_cents: number; disputed_cents: number; currency: string; status: string; paid_at: string; version: number; is_deleted: 0;
}

/**
 * The ids the checkout carried: `tally.ids()` in the page, passed by the merchant as metadata
 * `tally_visitor_id` / `tally_session_id` on the charge or its PaymentIntent (Checkout copies
 * `payment_intent_data.metadata` to the PaymentIntent, not to the charge). Anything else is 0: the
 * payment counts in totals but has no visitor to attribute to.
 */
function checkoutIds(charge: Stripe.Charge): { visitor: string; session: string } {
  const intent = typeof charge.payment_intent === 'object' && charge.payment_intent ? charge.payment_intent.metadata : {};
  const valid = (v: unknown): v is string => typeof v === 'string' && /^\d{1,20}$/.test(v) && BigInt(v) < 2n ** 64n;
  // The first valid one: an empty or mangled value on the charge must not hide a good one on the PaymentIntent.
  const pick = (key: string) => [charge.metadata?.[key], intent?.[key]].find(valid) ?? '0';
  return { visitor: pick('tally_visitor_id'), session: pick('tally_session_id') };
}

/**
 * What lost disputes (chargebacks) took of a charge: the amounts of its disputes that closed `lost`
 * (Stripe withdrew them for good; an open dispute may still be won, a won one is reinstated). Only
 * a charge marked `disputed` is asked about, so the usual charge costs no request. A charge lists
 * its disputes on one page: Stripe allows few per charge.
 */
export async function lostDisputeCents(stripe: Stripe, charge: Stripe.Charge): Promise<number> {
  if (!charge.disputed) return 0;
  const disputes = await stripe.disputes.list({ charge: charge.id, limit: 100 });
  return disputes.data.filter((d) => d.status === 'lost').reduce((sum, d) => sum + d.amount, 0);
}

/**
 * Stripe's charge statuses are ours (`succeeded`, `pending`, `failed`); only succeeded ones count as
 * revenue, net of refunds and lost disputes (`lost`, from lostDisputeCents). The two never take more
 * than the charge: Stripe refunds no disputed amount, so this only guards the sum.
 *
 * With manual capture Stripe calls an authorisation `succeeded` with `captured: false`: no money has
 * moved (it is released after 7 days unless captured), so it is stored as `uncaptured` and counts as
 * nothing, as in Stripe's own gross volume; the `charge.captured` event reads it back captured. A
 * partial capture counts what was captured (`amount_captured`), not what was authorised.
 */
export function paymentRow(siteId: string, charge: Stripe.Charge, version: number, lost: number): PaymentRow {
  const ids = checkoutIds(charge);
  const uncaptured = charge.status === 'succeeded' && charge.captured === false;
  const amount = !uncaptured && typeof charge.amount_captured === 'number' && charge.amount_captured > 0 ? charge.amount_captured : charge.amount;
  const refunded = Math.min(charge.amount_refunded ?? 0, amount);
  return {
    site_id: siteId, provider: STRIPE, payment_id: charge.id, visitor_id: ids.visitor, session_id: ids.session,
    amount_cents: amount, refunded_cents: refunded, disputed_cents: Math.max(0, Math.min(lost, amount - refunded)),
    currency: charge.currency.toUpperCase(), status: uncaptured ? 'uncaptured' : charge.status, paid_at: isoToCh(new Date(charge.created * 1000)), version, is_deleted: 0,
  };
}

export type LifecycleKind =
  | 'subscription_start' | 'subscription_end' | 'upgrade' | 'downgrade' | 'pause' | 'resume' | 'trial_conversion';

/** Kinds a re-sync clears (spec: the import rebuilds starts and ends; the rest only webhooks tell). */
export const REBUILT_LIFECYCLE: readonly LifecycleKind[] = ['subscription_start', 'subscription_end'];

type SubscriptionDelta = Partial<Stripe.Subscription> & { items?: { data?: Stripe.SubscriptionItem[] } };

/**
 * Monthly-equivalent is not needed to tell up from down: the same items' price x quantity compared.
 * Read defensively: a signed event's items are whatever its sender wrote (no list: no comparison).
 */
function recurringAmount(items: unknown): number | undefined {
  if (!Array.isArray(items)) return undefined;
  const number = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
  return items.reduce((sum: number, i: { price?: { unit_amount?: unknown }; quantity?: unknown } | null) =>
    sum + number(i?.price?.unit_amount, 0) * number(i?.quantity, 1), 0);
}

/** What an `updated` event changed, read from `previous_attributes` (which holds only what changed). */
function updateKinds(now: Stripe.Subscription, before: SubscriptionDelta): LifecycleKind[] {
  const kinds: LifecycleKind[] = [];
  if (before.status === 'trialing' && now.status === 'active') kinds.push('trial_conversion');
  if ('pause_collection' in before) {
    if (!before.pause_collection && now.pause_collection) kinds.push('pause');
    if (before.pause_collection && !now.pause_collection) kinds.push('resume');
  }
  const was = recurringAmount(before.items?.data);
  const is = recurringAmount(now.items?.data);
  if (was !== undefined && is !== undefined && was !== is) kinds.push(is > was ? 'upgrade' : 'downgrade');
  return kinds;
}

/** The lifecycle kinds one subscription event stands for (none for events that change no lifecycle). */
export function lifecycleKinds(event: Stripe.Event): LifecycleKind[] {
  switch (event.type) {
    case 'customer.subscription.created':
      return ['subscription_start'];
    case 'customer.subscription.deleted':
      return ['subscription_end'];
    case 'customer.subscription.paused':
      return ['pause'];
    case 'customer.subscription.resumed':
      return ['resume'];
    case 'customer.subscription.updated':
      return updateKinds(event.data.object, (event.data.previous_attributes ?? {}) as SubscriptionDelta);
    default:
      return [];
  }
}

/** Charge events: each is a cue to read the charge back (integrations/webhooks.ts). */
export const CHARGE_EVENTS: ReadonlySet<string> = new Set([
  'charge.succeeded', 'charge.failed', 'charge.pending', 'charge.captured', 'charge.refunded', 'charge.updated', 'charge.expired',
]);

/**
 * Events whose object names the charge to read back in `charge`: disputes, and refunds (a refund that
 * fails later gives the money back: only `charge.refund.updated` or `refund.*` says so).
 */
export const CHARGE_CUE_EVENTS: ReadonlySet<string> = new Set([
  'charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.closed', 'charge.dispute.funds_withdrawn', 'charge.dispute.funds_reinstated',
  'charge.refund.updated', 'refund.created', 'refund.updated', 'refund.failed',
]);

/** A row of the `lifecycle_events` table. */
export interface LifecycleRow {
  site_id: string; provider: string; event_id: string; kind: LifecycleKind; subscription_id: string; occurred_at: string;
  version: number; is_deleted: 0;
}

/**
 * Starts and ends are keyed by the subscription (`sub_x:subscription_start`), not by the event that
 * told of them, so the import's rebuild and a webhook for the same subscription are one row. Other
 * kinds can happen many times per subscription and are keyed by their webhook event.
 */
export function lifecycleRow(siteId: string, kind: LifecycleKind, subscriptionId: string, atSeconds: number, eventId: string, version: number): LifecycleRow {
  const key = REBUILT_LIFECYCLE.includes(kind) ? `${subscriptionId}:${kind}` : `${eventId}:${kind}`;
  return {
    site_id: siteId, provider: STRIPE, event_id: key, kind, subscription_id: subscriptionId,
    occurred_at: isoToCh(new Date(atSeconds * 1000)), version, is_deleted: 0,
  };
}

/** What the import can rebuild of a subscription: when it started and, once over, when it ended. */
export function subscriptionRows(siteId: string, sub: Stripe.Subscription, version: number): LifecycleRow[] {
  const rows = [lifecycleRow(siteId, 'subscription_start', sub.id, sub.start_date ?? sub.created, '', version)];
  const ended = sub.ended_at ?? (sub.status === 'canceled' ? sub.canceled_at : null);
  if (ended) rows.push(lifecycleRow(siteId, 'subscription_end', sub.id, ended, '', version));
  return rows;
}

