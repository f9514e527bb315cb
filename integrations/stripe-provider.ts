import Stripe from 'stripe';
import { z } from 'zod';
import type { Store } from '../clickhouse/store';
import { tombstone } from '../clickhouse/tombstones';
import { AppError, invalidRequest } from '../core/errors';
import { typeError } from '../core/fields';
import { nextVersion } from '../core/ids';
import type { BackfillRun, Provider } from './provider';
import { REBUILT_LIFECYCLE, STRIPE, lostDisputeCents, paymentRow, stripeClient, subscriptionRows, type StripeCredentials } from './stripe';

/**
 * Stripe as a provider: connected with a secret or restricted key (and optionally the webhook's
 * signing secret); the import reads every charge (PaymentIntent expanded, and a disputed charge's
 * disputes), then every subscription
 * (their starts and ends), newest first, 100 per page; a re-sync clears the payments and the
 * lifecycle kinds the import rebuilds.
 */
const PAGE_SIZE = 100;

const ConnectBody = z.strictObject({
  secret_key: z.string(typeError('a string', 'a Stripe secret key (sk_...) or restricted key (rk_...)'))
    .max(255, 'allows at most 255 characters: Stripe keys are about 110')
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/, { error: 'must be a Stripe secret key (sk_live_..., sk_test_...) or restricted key (rk_...)' }),
  webhook_secret: z.string(typeError('a string', 'the endpoint signing secret Stripe shows (whsec_...)')).max(255, 'allows at most 255 characters').regex(/^whsec_[A-Za-z0-9+/=]{8,}$/, { error: 'must be the endpoint signing secret Stripe shows (whsec_...)' }).optional(),
});
type ConnectInput = z.infer<typeof ConnectBody>;

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
      // Versioned at the read, like a webhook's read of one charge: the later read of Stripe wins.
      const version = nextVersion();
      const page = await stripe.charges.list({ limit: PAGE_SIZE, starting_after: after, expand: ['data.payment_intent'] });
      const rows = await Promise.all(page.data.map(async (c) => paymentRow(siteId, c, version, await lostDisputeCents(stripe, c))));
      return { ids: page.data.map((c) => c.id), hasMore: page.has_more, table: 'payments', rows };
    },
  },
  subscriptions: {
    counts: 'subscriptions',
    async page(stripe: Stripe, siteId: string, after: string | undefined): Promise<Page> {
      const version = nextVersion();
      const page = await stripe.subscriptions.list({ limit: PAGE_SIZE, status: 'all', starting_after: after });
      return { ids: page.data.map((s) => s.id), hasMore: page.has_more, table: 'lifecycle_events', rows: page.data.flatMap((s) => subscriptionRows(siteId, s, version)) };
    },
  },
} satisfies Record<string, { counts: string; page: (s: Stripe, site: string, after?: string) => Promise<Page> }>;
type Phase = keyof typeof PHASES;
const ORDER = Object.keys(PHASES) as Phase[];

function parseCursor(cursor: string): { phase: Phase; after: string | undefined } {
  const [phase, after] = cursor.split(':') as [Phase, string | undefined];
  return ORDER.includes(phase) ? { phase, after: after || undefined } : { phase: ORDER[0], after: undefined };
}

/** Pages from the stored cursor on: each page stored, then the cursor moved past it. */
async function importAll(run: BackfillRun<StripeCredentials>): Promise<boolean> {
  const stripe = stripeClient(run.credentials.secret_key, run.ctx.config.stripeApiUrl);
  let { phase, after } = parseCursor(run.row.backfill_cursor);
  for (;;) {
    const page = await PHASES[phase].page(stripe, run.siteId, after);
    const write = async () => { if (page.rows.length) await run.ctx.store.insert(page.table, page.rows); };
    after = page.ids[page.ids.length - 1] ?? after;
    // Where a restart goes on: this phase after its last stored id, else the next phase from its start.
    const following = page.hasMore ? phase : ORDER[ORDER.indexOf(phase) + 1];
    const cursor = following === phase || following === undefined ? `${phase}:${after ?? ''}` : `${following}:`;
    if (!(await run.progress(cursor, { [PHASES[phase].counts]: page.ids.length }, write))) return false;
    if (following === undefined) return true;
    if (following !== phase) [phase, after] = [following, undefined];
  }
}

/**
 * The key must list charges and disputes (what the backfill and webhooks read): a wrong key is the
 * caller's 400, an unreachable Stripe a 503. Resolves to the id of the account's newest charge, the
 * witness `holds` looks for (a key reads one account: if the site stored that charge, it is the same).
 */
async function verify(credentials: StripeCredentials, config: { stripeApiUrl?: URL }): Promise<string | undefined> {
  const stripe = stripeClient(credentials.secret_key, config.stripeApiUrl);
  try {
    const newest = await stripe.charges.list({ limit: 1 });
    await stripe.disputes.list({ limit: 1 });
    return newest.data[0]?.id;
  } catch (err) {
    if (err instanceof Stripe.errors.StripeAuthenticationError) throw invalidRequest('secret_key: Stripe refused this key.');
    if (err instanceof Stripe.errors.StripePermissionError) {
      throw invalidRequest('secret_key: this key may not read charges or disputes; a restricted key needs read access to Charges, PaymentIntents and Disputes.');
    }
    const why = err instanceof Stripe.errors.StripeRateLimitError ? 'Stripe is rate-limiting this key' : 'Stripe could not be reached to check the key';
    throw new AppError(503, 'provider_unavailable', `${why}; try again shortly.`, undefined, { 'Retry-After': '30' });
  }
}

const PAYMENT_COLUMNS = ['site_id', 'provider', 'payment_id', 'visitor_id', 'session_id', 'amount_cents', 'refunded_cents', 'disputed_cents', 'currency', 'status', 'paid_at'];
const LIFECYCLE_COLUMNS = ['site_id', 'provider', 'event_id', 'kind', 'subscription_id', 'occurred_at'];

/**
 * What a re-sync clears before the full import: the site's stored payments of the provider and the
 * lifecycle events an import rebuilds (starts and ends); the other kinds only webhooks tell of.
 */
async function purge(store: Store, siteId: string): Promise<void> {
  const params = { s: siteId, p: STRIPE, k: [...REBUILT_LIFECYCLE] };
  await tombstone(store, 'payments', PAYMENT_COLUMNS, 'site_id = {s:UUID} AND provider = {p:String}', params);
  await tombstone(store, 'lifecycle_events', LIFECYCLE_COLUMNS, 'site_id = {s:UUID} AND provider = {p:String} AND kind IN {k:Array(String)}', params);
}

export const stripeProvider: Provider<ConnectInput, StripeCredentials> = {
  name: STRIPE,
  label: 'Stripe',
  connectBody: ConnectBody,
  verify,
  // "live secret key ...4242": the kind, the mode and the last four characters (how Stripe's dashboard
  // tells keys apart), never a prefix a scanner would take for a key.
  account: (input) => {
    const [kind, mode] = input.secret_key.split('_');
    return `${mode} ${kind === 'rk' ? 'restricted' : 'secret'} key ...${input.secret_key.slice(-4)}`;
  },
  credentials: (input) => ({ secret_key: input.secret_key }),
  webhookSecret: (input) => input.webhook_secret,
  counts: ['payments', 'subscriptions'],
  importAll,
  purge,
  async holds(store, siteId, witness) {
    const found = await store.query<{ n: number }>(
      `SELECT count() AS n FROM ${store.table('payments')} FINAL WHERE site_id = {s:UUID} AND provider = {p:String} AND payment_id = {id:String} AND is_deleted = 0`,
      { s: siteId, p: STRIPE, id: witness });
    return Number(found[0]?.n ?? 0) > 0;
  },
  permanent: (err) => err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError ||
    err instanceof Stripe.errors.StripeInvalidRequestError,
  describe(err) {
    if (err instanceof Stripe.errors.StripeAuthenticationError) return 'Stripe refused the secret key (revoked or rolled?); connect again with a valid key.';
    if (err instanceof Stripe.errors.StripePermissionError) return 'The key may not list charges, disputes or subscriptions; give a restricted key read access to them.';
    return `Stripe: ${(err as Error).message}`;
  },
};
