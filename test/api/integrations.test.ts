import Stripe from 'stripe';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';
import { backfillState as backfillOf, connectionOf, listIntegrations, until } from '../support/integrations';
import { startStripeDouble, type DoubleCharge, type StripeDouble } from '../support/stripe-double';
import { visitorIdFor } from '../../ingest/hash';
import { IntegrationRepo, queuedBackfill } from '../../model/integrations';

/**
 * Stripe connections end to end: the official client against a local double of Stripe's API, the
 * backfill on the real BullMQ workers and Redis, payments read back through the revenue reports.
 */
let svc: TestService;
let stripe: StripeDouble;
const KEY = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc';
const WHSEC = 'whsec_test1234567890abcdef';
const JUNE = Date.UTC(2026, 5, 1) / 1000;
const WINDOW = '?from=2026-06-01T00:00:00Z&to=2026-07-01T00:00:00Z&tz=UTC';

beforeAll(async () => {
  stripe = await startStripeDouble();
  stripe.keys.add(KEY);
  svc = await startTestService({ TALLY_STRIPE_API_URL: stripe.url, TALLY_RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(async () => {
  await svc.stop();
  await stripe.close();
});

const put = (t: Tenant, body: unknown, provider = 'stripe', token = t.token) =>
  svc.api('PUT', `/sites/${t.siteId}/integrations/${provider}`, { token, body });
const list = (t: Tenant, token = t.token) => listIntegrations(svc, t, token);
const connection = (t: Tenant) => connectionOf(svc, t);
const backfillState = (t: Tenant, state: string) => backfillOf(svc, t, state);

/** 250 charges over June (3 pages of 100): every 10th refunded by 500, every 25th failed. */
function juneCharges(prefix: string): DoubleCharge[] {
  return Array.from({ length: 250 }, (_, i) => ({
    id: `ch_${prefix}${String(i).padStart(4, '0')}`, amount: 1000 + i, created: JUNE + i * 3600,
    amount_refunded: i % 10 === 0 ? 500 : 0, status: i % 25 === 0 ? 'failed' : 'succeeded',
  }));
}
const lost = (c: DoubleCharge) => (c.disputes ?? []).filter((d) => d.status === 'lost').reduce((sum, d) => sum + d.amount, 0);
const net = (charges: DoubleCharge[]) => charges.filter((c) => (c.status ?? 'succeeded') === 'succeeded')
  .reduce((sum, c) => sum + c.amount - (c.amount_refunded ?? 0) - lost(c), 0);

describe('connecting', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
  });

  test.each([
    [{}, 'secret_key'],
    [{ secret_key: 'pk_test_abcdefghijkl' }, 'secret_key'],
    [{ secret_key: KEY, webhook_secret: 'nope' }, 'webhook_secret'],
    [{ secret_key: KEY, password: 'x' }, 'password'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await put(t, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(field);
  });

  test.each([
    [{ secret_key: 123 }, 'secret_key: must be a string: a Stripe secret key (sk_...) or restricted key (rk_...)'],
    [{ secret_key: `sk_test_${'a'.repeat(90_000)}` }, 'secret_key: allows at most 255 characters: Stripe keys are about 110'],
    [{ secret_key: KEY, webhook_secret: 5 }, 'webhook_secret: must be a string: the endpoint signing secret Stripe shows (whsec_...)'],
  ])('a wrong type or a key no retry can make work is a 400 saying so, not "required" or a 503: %j', async (body, message) => {
    const res = await put(t, body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(message);
  });

  test('a key Stripe refuses is a 400 that says so; a key without read permission too; nothing is stored', async () => {
    const refused = await put(t, { secret_key: 'sk_test_notAKeyStripeKnows' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/Stripe refused/);
    stripe.keys.add('rk_test_noChargesRead1');
    stripe.readOnlyDenied.add('rk_test_noChargesRead1');
    const denied = await put(t, { secret_key: 'rk_test_noChargesRead1' });
    expect(denied.status).toBe(400);
    expect(denied.body.error.message).toMatch(/read charges/);
    // Lost disputes net revenue, so a key that reads charges but not disputes would report too much.
    stripe.keys.add('rk_test_noDisputeRead1');
    stripe.disputesDenied.add('rk_test_noDisputeRead1');
    const blind = await put(t, { secret_key: 'rk_test_noDisputeRead1' });
    expect(blind.status).toBe(400);
    expect(blind.body.error.message).toMatch(/Disputes/);
    expect(await connection(t)).toBeUndefined();
  });

  test('Stripe unreachable while checking the key is 503 provider_unavailable with Retry-After, not a 500', async () => {
    stripe.failNext(3); // the client's first try and its two retries
    const res = await put(t, { secret_key: KEY });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('provider_unavailable');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(await connection(t)).toBeUndefined();
    stripe.failNext(1, undefined, 429); // not retried by the client: one answer
    const limited = await put(t, { secret_key: KEY });
    expect(limited.status).toBe(503);
    expect(limited.body.error.message).toBe('Stripe is rate-limiting this key; try again shortly.');
  });

  test('an unknown provider is 404 naming the providers; revenue:read may list but not connect', async () => {
    const res = await put(t, { secret_key: KEY }, 'paypal');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('stripe');
    const reader = await t.key({ scopes: ['revenue:read'] });
    expect((await put(t, { secret_key: KEY }, 'stripe', reader.token)).status).toBe(403);
    expect((await list(t, reader.token)).status).toBe(200);
    const analyst = await t.key({ scopes: ['analytics:read'] });
    expect((await list(t, analyst.token)).status).toBe(403);
  });
});

describe('the backfill', () => {
  let t: Tenant;
  const charges = juneCharges('bf');
  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    stripe.charges.push(...charges);
    // The checkout's ids, on the charge or (as Stripe Checkout puts them) on its PaymentIntent.
    charges[1].metadata = { tally_visitor_id: visitorIdFor(t.siteId, 'alice') };
    charges[2].intent_metadata = { tally_visitor_id: visitorIdFor(t.siteId, 'bob'), tally_session_id: '42' };
    // Chargebacks: one lost (Stripe withdrew 600 for good), one won, one still open.
    charges[3].disputes = [{ id: 'dp_bf_lost', amount: 600, status: 'lost' }];
    charges[4].disputes = [{ id: 'dp_bf_won', amount: 1004, status: 'won' }];
    charges[5].disputes = [{ id: 'dp_bf_open', amount: 1005, status: 'needs_response' }];
    stripe.subscriptions.push(
      { id: 'sub_bf_live', created: JUNE + 100, status: 'active' },
      { id: 'sub_bf_gone', created: JUNE + 200, status: 'canceled', ended_at: JUNE + 86_400 },
    );
  });
  afterAll(() => {
    stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_bf'));
    stripe.subscriptions = stripe.subscriptions.filter((s) => !s.id.startsWith('sub_bf'));
  });

  test('connect answers the queued connection without any secret, then imports every page', async () => {
    const res = await put(t, { secret_key: KEY, webhook_secret: WHSEC });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ site_id: t.siteId });
    expect(res.body.data).toMatchObject({ site_id: t.siteId, provider: 'stripe', account: 'test secret key ...p7dc', webhook: { configured: true, last_received_at: null } });
    expect(['queued', 'running', 'completed']).toContain(res.body.data.backfill.state);
    expect(JSON.stringify(res.body)).not.toMatch(/sk_test|whsec_/);

    const done = await backfillState(t, 'completed');
    expect(done.backfill).toMatchObject({ counts: { payments: 250, subscriptions: 2, pages: 4 }, error: null });
    expect(done.backfill.started_at).toEqual(expect.any(String));
    expect(done.backfill.finished_at).toEqual(expect.any(String));
    expect(JSON.stringify((await list(t)).body)).not.toMatch(/sk_test|whsec_/);
  });

  test('the same key sent again keeps its import and, without webhook_secret, the secret set before', async () => {
    const res = await put(t, { secret_key: KEY });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ webhook: { configured: true }, backfill: { state: 'completed', counts: { payments: 250 } } });
    const row = await new IntegrationRepo(svc.running.ctx.store).get(t.siteId);
    expect(svc.running.ctx.secrets.open(row!.webhook_secret)).toBe(WHSEC);
  });

  test('period=all starts at the first imported payment when the tracker came later (it read less than a month)', async () => {
    const all = await svc.api('GET', `/sites/${t.siteId}/overview?period=all&tz=UTC`, { token: t.token });
    expect(all.status).toBe(200);
    const june = await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
    expect(all.body.data.revenue_cents).toBe(june.body.data.revenue_cents);
    expect(all.body.data.revenue_cents).toBeGreaterThan(0);
    expect(all.body.meta.range.from).toBe('2026-06-01T00:00:00+00:00');
  });

  test('credentials are stored sealed, not as given', async () => {
    const row = await new IntegrationRepo(svc.running.ctx.store).get(t.siteId);
    expect(row!.credentials).not.toContain(KEY);
    expect(row!.webhook_secret).not.toContain('whsec_');
    expect(JSON.parse(svc.running.ctx.secrets.open(row!.credentials))).toEqual({ secret_key: KEY });
  });

  test('imported payments are the revenue reports: succeeded only, net of refunds and lost disputes, attributed by the checkout ids', async () => {
    const overview = await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
    expect(overview.status).toBe(200);
    expect(overview.body.data).toMatchObject({ payments: 240, revenue_cents: net(charges) });
    expect(net(charges)).toBe(net(charges.map((c) => ({ ...c, disputes: [] }))) - 600);
    const disputed = await svc.running.ctx.store.query<{ payment_id: string; disputed: string }>(
      `SELECT payment_id, toString(disputed_cents) AS disputed FROM ${svc.running.ctx.store.table('payments')} FINAL
       WHERE site_id = {s:UUID} AND payment_id IN {ids:Array(String)} ORDER BY payment_id`, { s: t.siteId, ids: [charges[3].id, charges[4].id, charges[5].id] });
    expect(disputed.map((r) => r.disputed)).toEqual(['600', '0', '0']);
    // Only disputed charges cost a request: three of 250.
    expect(stripe.requests.filter((r) => r.startsWith('GET /v1/disputes?charge=')).length).toBe(3);
    const rows = await svc.running.ctx.store.query<{ payment_id: string; visitor: string; session: string }>(
      `SELECT payment_id, toString(visitor_id) AS visitor, toString(session_id) AS session FROM ${svc.running.ctx.store.table('payments')} FINAL
       WHERE site_id = {s:UUID} AND visitor_id != 0 ORDER BY payment_id`, { s: t.siteId });
    expect(rows).toEqual([
      { payment_id: charges[1].id, visitor: visitorIdFor(t.siteId, 'alice'), session: '0' },
      { payment_id: charges[2].id, visitor: visitorIdFor(t.siteId, 'bob'), session: '42' },
    ]);
  });

  test('subscriptions become start and end lifecycle events', async () => {
    const rows = await svc.running.ctx.store.query<{ event_id: string; kind: string }>(
      `SELECT event_id, kind FROM ${svc.running.ctx.store.table('lifecycle_events')} FINAL WHERE site_id = {s:UUID} AND is_deleted = 0 ORDER BY event_id`, { s: t.siteId });
    expect(rows).toEqual([
      { event_id: 'sub_bf_gone:subscription_end', kind: 'subscription_end' },
      { event_id: 'sub_bf_gone:subscription_start', kind: 'subscription_start' },
      { event_id: 'sub_bf_live:subscription_start', kind: 'subscription_start' },
    ]);
  });
});

describe('failures and recovery', () => {
  test('Stripe errors are retried, and the retry goes on from the last stored page, not from the start', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const charges = juneCharges('rt');
    stripe.charges.push(...charges);
    stripe.subscriptions.push({ id: 'sub_rt_1', created: JUNE, status: 'active' });
    try {
      const before = stripe.requests.length;
      // The charges import (3 pages) succeeds; the subscriptions page fails on every try the client
      // makes (its own 2 retries included), so the job fails once and BullMQ runs it again.
      stripe.failNext(3, '/v1/subscriptions');
      expect((await put(t, { secret_key: KEY })).status).toBe(200);
      const done = await backfillState(t, 'completed');
      expect(done.backfill).toMatchObject({ counts: { payments: 250, subscriptions: 1, pages: 4 }, error: null });
      const made = stripe.requests.slice(before);
      // The key check and 3 pages of charges, once each: the retry resumed at the subscriptions.
      expect(made.filter((r) => r.startsWith('GET /v1/charges')).length).toBe(4);
      expect(made.filter((r) => r.startsWith('GET /v1/subscriptions')).length).toBe(4);
      const overview = await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
      expect(overview.body.data).toMatchObject({ payments: 240, revenue_cents: net(charges) });
    } finally {
      stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_rt'));
      stripe.subscriptions = stripe.subscriptions.filter((s) => !s.id.startsWith('sub_rt'));
    }
  });

  test('another key is another account for all Tally can tell: what the first imported is cleared and the new key\'s account imported', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    expect((await put(t, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
    await backfillState(t, 'completed');
    // A payment only the first account had (the double lists one account's charges).
    await svc.running.ctx.store.insert('payments', [{ site_id: t.siteId, provider: 'stripe', payment_id: 'ch_first_account', visitor_id: '0', session_id: '0',
      amount_cents: 77_700, refunded_cents: 0, currency: 'USD', status: 'succeeded', paid_at: '2026-06-10 00:00:00.000', version: 1, is_deleted: 0 }]);
    const other = 'sk_test_otherAccount0001';
    stripe.keys.add(other);
    // Another account: the same figures under its own charge ids, so none of the first account's is there.
    stripe.accounts.set(other, stripe.charges.map((c) => ({ ...c, id: c.id.replace(/^ch_/, 'ch_other_') })));
    const res = await put(t, { secret_key: other, webhook_secret: 'whsec_otherAccount1234' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ account: 'test secret key ...0001', webhook: { configured: true }, backfill: { state: 'queued', counts: { payments: 0 } } });
    await backfillState(t, 'completed');
    const revenue = (await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token })).body.data.revenue_cents;
    expect(revenue).toBe(net(stripe.charges));
    const row = await new IntegrationRepo(svc.running.ctx.store).get(t.siteId);
    expect(JSON.parse(svc.running.ctx.secrets.open(row!.credentials))).toEqual({ secret_key: other });
  });

  test('a rolled key of the same account (its newest charge is stored) keeps the import and the webhook secret', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    stripe.charges.push(...juneCharges('rk').slice(0, 3));
    try {
      expect((await put(t, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
      const before = (await backfillState(t, 'completed')).backfill;
      expect(before.counts.payments).toBe(3);
      const rolled = 'sk_test_rolledSameAcct01';
      stripe.keys.add(rolled);
      const res = await put(t, { secret_key: rolled });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ account: 'test secret key ...ct01', webhook: { configured: true }, backfill: { state: 'completed', counts: before.counts } });
    } finally {
      stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_rk'));
    }
  });

  test('another account\'s key without a webhook secret drops the first account\'s secret (its notifications would get in)', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write'] });
    expect((await put(t, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
    const other = 'sk_test_thirdAccount0001';
    stripe.keys.add(other);
    stripe.accounts.set(other, []);
    const res = await put(t, { secret_key: other });
    expect(res.body.data).toMatchObject({ webhook: { configured: false } });
  });

  test('a page the old account\'s import read before a re-key to another account is not written after its purge', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    stripe.charges.push(...juneCharges('old').slice(0, 5));
    expect((await put(t, { secret_key: KEY })).status).toBe(200);
    await backfillState(t, 'completed');
    const repo = new IntegrationRepo(svc.running.ctx.store);
    // A charge the first import did not see, so no tombstone of the purge covers it.
    stripe.charges.push({ ...juneCharges('old_late')[0] });
    // An import of the first account, run here so the test holds its first page between read and write.
    const queued = (await repo.update(t.siteId, (row) => row && { ...row, ...queuedBackfill(t.siteId, ['payments', 'subscriptions']) }))!;
    const release = stripe.holdNext('/v1/charges');
    const asked = stripe.requests.length;
    const backfill = svc.running.ctx.queues.definition('integration-backfill')!;
    const old = backfill.handler({ siteId: t.siteId, job: queued.backfill_job }, { ...svc.running.ctx, enqueue: svc.running.ctx.queues.enqueue } as never, { made: 0, max: 1 });
    await until('the old import reads a page', async () => stripe.requests.slice(asked).some((r) => r.startsWith('GET /v1/charges?')), (read) => read);
    const other = 'sk_test_fourthAccount001';
    stripe.keys.add(other);
    const mine = juneCharges('fa').slice(0, 12);
    stripe.accounts.set(other, mine);
    expect((await put(t, { secret_key: other })).status).toBe(200);
    release();
    await old;
    await backfillState(t, 'completed');
    const store = svc.running.ctx.store;
    const stored = await store.query<{ id: string }>(
      `SELECT payment_id AS id FROM ${store.table('payments')} FINAL WHERE site_id = {s:UUID} AND is_deleted = 0 ORDER BY id`, { s: t.siteId });
    expect(stored.map((r) => r.id)).toEqual(mine.map((c) => c.id).sort());
    stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_old'));
  });

  test('a key revoked at Stripe: a re-sync is 409 and clears nothing; an import running into it fails at once; re-keying queues it again', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const key = 'sk_test_revokedLater123';
    stripe.keys.add(key);
    expect((await put(t, { secret_key: key })).status).toBe(200);
    await backfillState(t, 'completed');
    const before = (await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token })).body.data.revenue_cents;
    stripe.keys.delete(key);
    const refused = await svc.api('POST', `/sites/${t.siteId}/integrations/stripe/resync`, { token: t.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({ code: 'credentials_refused', message: expect.stringMatching(/^Stripe refused the stored credentials \(secret_key: Stripe refused this key\.\); nothing was cleared/) });
    expect((await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token })).body.data.revenue_cents).toBe(before);
    // A generation queued before the key was revoked (as after a restart) runs into it.
    await new IntegrationRepo(svc.running.ctx.store).update(t.siteId, (row) => row && { ...row, ...queuedBackfill(t.siteId, ['payments', 'subscriptions']) });
    const queued = (await new IntegrationRepo(svc.running.ctx.store).get(t.siteId))!;
    await svc.running.ctx.queues.enqueue('integration-backfill', { siteId: t.siteId, job: queued.backfill_job }, queued.backfill_job);
    const failed = await backfillState(t, 'failed');
    expect(failed.backfill.error).toMatch(/refused the secret key/);
    expect((await put(t, { secret_key: KEY })).status).toBe(200);
    await backfillState(t, 'completed');
  });

  test('the reconciler queues a backfill whose job Redis lost', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write'] });
    expect((await put(t, { secret_key: KEY })).status).toBe(200);
    await backfillState(t, 'completed');
    // A generation recorded as queued in ClickHouse with no job in Redis (as after a Redis restart).
    await new IntegrationRepo(svc.running.ctx.store).update(t.siteId, (row) => row && { ...row, ...queuedBackfill(t.siteId, ['payments', 'subscriptions']) });
    await new Promise((r) => setTimeout(r, 300));
    expect((await connection(t)).backfill.state).toBe('queued');
    const reconcile = svc.running.ctx.queues.definition('backfill-reconciler')!;
    const ctx = { ...svc.running.ctx, enqueue: svc.running.ctx.queues.enqueue } as never;
    expect(await reconcile.handler({}, ctx, { made: 0, max: 1 })).toBeGreaterThanOrEqual(1);
    await backfillState(t, 'completed');
  });
});

describe('re-sync', () => {
  let t: Tenant;
  const charges = juneCharges('rs').slice(0, 30);
  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    stripe.charges.push(...charges);
    stripe.subscriptions.push({ id: 'sub_rs_1', created: JUNE + 50, status: 'active' });
    expect((await put(t, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
    await backfillState(t, 'completed');
  });
  afterAll(() => {
    stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_rs'));
    stripe.subscriptions = stripe.subscriptions.filter((s) => !s.id.startsWith('sub_rs'));
  });

  test('needs revenue:write, and a provider that is not the connected one is 404', async () => {
    const reader = await t.key({ scopes: ['revenue:read'] });
    expect((await svc.api('POST', `/sites/${t.siteId}/integrations/stripe/resync`, { token: reader.token })).status).toBe(403);
    const other = await svc.api('POST', `/sites/${t.siteId}/integrations/paddle/resync`, { token: t.token });
    expect(other.status).toBe(404);
    expect(other.body.error).toEqual({ code: 'not_found', message: expect.stringContaining('providers: stripe, search_console') });
    const unconnected = await svc.tenant({ scopes: ['revenue:write'] });
    expect((await svc.api('POST', `/sites/${unconnected.siteId}/integrations/stripe/resync`, { token: unconnected.token })).status).toBe(404);
  });

  test('takes no body: fields or another content type are refused before anything is cleared; {} is no body', async () => {
    const url = `/sites/${t.siteId}/integrations/stripe/resync`;
    const fields = await svc.api('POST', url, { token: t.token, body: { from: '2026-01-01' } });
    expect(fields.status).toBe(400);
    expect(fields.body.error).toMatchObject({ code: 'invalid_request', message: 'body: this endpoint takes no body' });
    const text = await svc.api('POST', url, { token: t.token, raw: 'please', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect((await svc.api('GET', '/integrations', { token: t.token })).body.data[0].backfill.state).not.toBe('queued');
    expect((await svc.api('POST', url, { token: t.token, body: {} })).status).toBe(202);
  });

  test('clears stored payments and start/end events, keeps other lifecycle events and the connection, then imports from the beginning', async () => {
    const store = svc.running.ctx.store;
    // A payment Stripe no longer lists, a start of a subscription it no longer has, and an upgrade
    // only a webhook could tell: the first two go, the upgrade stays.
    await store.insert('payments', [{ site_id: t.siteId, provider: 'stripe', payment_id: 'ch_rs_stale', visitor_id: '0', session_id: '0',
      amount_cents: 99_999, refunded_cents: 0, currency: 'USD', status: 'succeeded', paid_at: '2026-06-10 00:00:00.000', version: 1, is_deleted: 0 }]);
    await store.insert('lifecycle_events', [
      { site_id: t.siteId, provider: 'stripe', event_id: 'sub_rs_old:subscription_start', kind: 'subscription_start', subscription_id: 'sub_rs_old', occurred_at: '2026-06-02 00:00:00.000', version: 1, is_deleted: 0 },
      { site_id: t.siteId, provider: 'stripe', event_id: 'evt_rs_up:upgrade', kind: 'upgrade', subscription_id: 'sub_rs_1', occurred_at: '2026-06-03 00:00:00.000', version: 1, is_deleted: 0 },
    ]);
    const before = await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
    expect(before.body.data.revenue_cents).toBe(net(charges) + 99_999);

    const res = await svc.api('POST', `/sites/${t.siteId}/integrations/stripe/resync`, { token: t.token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ data: { provider: 'stripe', backfill: { state: 'queued' } }, meta: { site_id: t.siteId } });

    const done = await backfillState(t, 'completed');
    expect(done.webhook.configured).toBe(true);
    const after = await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
    expect(after.body.data.revenue_cents).toBe(net(stripe.charges));
    const kinds = await store.query<{ event_id: string }>(
      `SELECT event_id FROM ${store.table('lifecycle_events')} FINAL WHERE site_id = {s:UUID} AND is_deleted = 0 ORDER BY event_id`, { s: t.siteId });
    expect(kinds.map((k) => k.event_id)).toEqual(['evt_rs_up:upgrade', 'sub_rs_1:subscription_start']);
  });
});

describe('webhooks', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    expect((await put(t, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
    await backfillState(t, 'completed');
  });

  let seq = 0;
  const event = (type: string, object: object, extra: object = {}) =>
    ({ id: `evt_${++seq}`, object: 'event', type, created: JUNE + 86_400 * 5 + seq, data: { object, ...extra } });
  const charge = (id: string, over: object = {}) =>
    ({ id, object: 'charge', amount: 5000, amount_refunded: 0, currency: 'usd', status: 'succeeded', created: JUNE + 86_400 * 5, metadata: {}, payment_intent: null, ...over });
  const sub = (id: string, over: object = {}) => ({ id, object: 'subscription', status: 'active', pause_collection: null, items: { data: [] }, ...over });
  const item = (amount: number, quantity = 1) => ({ price: { unit_amount: amount }, quantity });

  function send(payload: unknown, opts: { secret?: string; site?: string; signature?: string | null; raw?: string } = {}) {
    const body = opts.raw ?? JSON.stringify(payload);
    const signature = opts.signature === undefined
      ? Stripe.webhooks.generateTestHeaderString({ payload: body, secret: opts.secret ?? WHSEC })
      : opts.signature;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) };
    return fetchRaw(`/webhooks/stripe/${opts.site ?? t.siteId}`, body, headers);
  }

  const fetchRaw = (path: string, body: string, headers: Record<string, string>) =>
    request('POST', `${svc.base}${path}`, { raw: body, headers });

  const revenue = async () => (await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token })).body.data;

  test('refuses a missing or wrong signature with 400 invalid_signature, and a site without a connection with 404', async () => {
    const e = event('charge.succeeded', charge('ch_wh_bad'));
    const missing = await send(e, { signature: null });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('invalid_signature');
    const wrong = await send(e, { secret: 'whsec_someoneElsesSecret' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('invalid_signature');
    const other = await svc.tenant();
    expect((await send(e, { site: other.siteId })).status).toBe(404);
    expect((await send(e, { site: 'not-a-site' })).status).toBe(404);
    // Signed with the right secret but dated ahead (a body replayable until then): refused past the 5-minute tolerance.
    const body = JSON.stringify(e);
    const at = (aheadS: number) => Stripe.webhooks.generateTestHeaderString({ payload: body, secret: WHSEC, timestamp: Math.floor(Date.now() / 1000) + aheadS });
    const ahead = await send(e, { signature: at(3600) });
    expect([ahead.status, ahead.body.error.code]).toEqual([400, 'invalid_signature']);
    expect(ahead.body.error.message).toMatch(/ahead of this server's clock/);
    expect((await revenue()).payments).toBe(0);
  });

  /** A charge Stripe holds (the webhook reads it back), removed from the double after this suite. */
  const held = (c: Partial<DoubleCharge> & { id: string }): DoubleCharge => {
    const added = { amount: 5000, created: JUNE + 86_400 * 5, ...c };
    stripe.charges.push(added);
    return added;
  };
  afterAll(() => {
    stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_wh'));
  });

  test('a charge is read back from Stripe: stored once however often it is delivered, a later refund nets it', async () => {
    const stored = held({ id: 'ch_wh_1' });
    const paid = event('charge.succeeded', charge('ch_wh_1'));
    for (let i = 0; i < 3; i++) expect((await send(paid)).body).toMatchObject({ received: true, stored: 1 });
    expect(await revenue()).toMatchObject({ payments: 1, revenue_cents: 5000 });
    stored.amount_refunded = 1500;
    expect((await send(event('charge.refunded', charge('ch_wh_1', { amount_refunded: 1500 })))).status).toBe(200);
    // The older success delivered again (out of order) does not undo the refund: the charge is read as it now stands.
    expect((await send(paid)).status).toBe(200);
    expect(await revenue()).toMatchObject({ payments: 1, revenue_cents: 3500 });
    const noted = (await connection(t)).webhook.last_received_at;
    expect(noted).toEqual(expect.any(String));
    // Noted once a minute, not rewritten by every notification of a burst.
    held({ id: 'ch_wh_2' });
    expect((await send(event('charge.succeeded', charge('ch_wh_2')))).status).toBe(200);
    expect((await connection(t)).webhook.last_received_at).toBe(noted);
  });

  test('a Checkout payment (the ids on its PaymentIntent, which the event names by id only) is attributed; a refund keeps it so', async () => {
    await svc.admin('events import', { site: t.siteId }, JSON.stringify({
      ts: '2026-06-20T09:00:00Z', name: 'pageview', url: `https://${t.domain}/pricing`, referrer: 'https://news.ycombinator.com/', visitor: 'wh-buyer',
    }));
    // The charge's own metadata holds an empty id (a form field left blank): it must not hide the PaymentIntent's.
    const bought = held({ id: 'ch_wh_checkout', amount: 3000, created: Date.UTC(2026, 5, 20, 9, 30) / 1000, metadata: { tally_visitor_id: '' },
      intent_metadata: { tally_visitor_id: visitorIdFor(t.siteId, 'wh-buyer') } });
    const referrer = async () => (await svc.api('GET', `/sites/${t.siteId}/breakdowns/referrer${WINDOW}`, { token: t.token })).body.data;
    expect((await send(event('charge.succeeded', charge('ch_wh_checkout', { amount: 3000, payment_intent: 'pi_wh_checkout' })))).status).toBe(200);
    expect(await referrer()).toContainEqual(expect.objectContaining({ label: 'news.ycombinator.com', revenue_cents: 3000 }));
    bought.amount_refunded = 1000;
    expect((await send(event('charge.refunded', charge('ch_wh_checkout', { amount: 3000, amount_refunded: 1000, payment_intent: 'pi_wh_checkout' })))).status).toBe(200);
    expect(await referrer()).toContainEqual(expect.objectContaining({ label: 'news.ycombinator.com', revenue_cents: 2000 }));
  });

  test('a refund read after a backfill page was read wins, even when the page is written after it', async () => {
    // The newest charge, so it is on the backfill's first page, which the double holds once it has read it.
    const raced = held({ id: 'ch_wh_race', amount: 800, created: JUNE + 86_400 * 29 });
    const pageReads = () => stripe.requests.filter((r) => r.startsWith('GET /v1/charges?')).length;
    const before = pageReads();
    const release = stripe.holdNext('/v1/charges');
    expect((await svc.api('POST', `/sites/${t.siteId}/integrations/stripe/resync`, { token: t.token })).status).toBe(202);
    await until('the backfill to read its first page', async () => pageReads(), (n) => n > before);
    raced.amount_refunded = 300;
    expect((await send(event('charge.refunded', charge('ch_wh_race', { amount: 800, amount_refunded: 300 })))).body.stored).toBe(1);
    release();
    await backfillState(t, 'completed');
    const store = svc.running.ctx.store;
    const [row] = await store.query<{ refunded_cents: number }>(
      `SELECT refunded_cents FROM ${store.table('payments')} FINAL WHERE site_id = {s:UUID} AND payment_id = 'ch_wh_race' AND is_deleted = 0`, { s: t.siteId });
    expect(Number(row.refunded_cents)).toBe(300);
  });

  test('a chargeback takes its amount off the revenue once the dispute is lost, not while it is open; later charge events keep it off', async () => {
    const disputed = held({ id: 'ch_wh_disputed', amount: 4000 });
    const before = (await revenue()).revenue_cents;
    expect((await send(event('charge.succeeded', charge('ch_wh_disputed', { amount: 4000 })))).status).toBe(200);
    expect((await revenue()).revenue_cents).toBe(before + 4000);
    const dispute = (status: string) => ({ id: 'dp_wh_1', object: 'dispute', amount: 2500, charge: 'ch_wh_disputed', status });
    disputed.disputes = [{ id: 'dp_wh_1', amount: 2500, status: 'needs_response' }];
    expect((await send(event('charge.dispute.created', dispute('needs_response')))).body).toMatchObject({ received: true, stored: 1 });
    expect((await revenue()).revenue_cents).toBe(before + 4000);
    disputed.disputes[0].status = 'lost';
    expect((await send(event('charge.dispute.closed', dispute('lost')))).body).toMatchObject({ received: true, stored: 1 });
    expect(await revenue()).toMatchObject({ revenue_cents: before + 1500 });
    // A charge event after the dispute reads the charge, and its disputes, again.
    expect((await send(event('charge.updated', charge('ch_wh_disputed', { amount: 4000, disputed: true })))).status).toBe(200);
    expect((await revenue()).revenue_cents).toBe(before + 1500);
    const nameless = await send(event('charge.dispute.closed', { id: 'dp_wh_2', object: 'dispute', status: 'lost' }));
    expect(nameless.status).toBe(400);
    expect(nameless.body.error.message).toContain('names no charge');
  });

  test('a refund that fails later gives the money back: refund events are a cue to read the charge again', async () => {
    const refunded = held({ id: 'ch_wh_refail', amount: 1000, amount_refunded: 400 });
    const before = (await revenue()).revenue_cents;
    expect((await send(event('charge.refunded', charge('ch_wh_refail', { amount: 1000, amount_refunded: 400 })))).body.stored).toBe(1);
    expect((await revenue()).revenue_cents).toBe(before + 600);
    // The bank returns the refund: Stripe puts the money back on the charge and says so with refund events only.
    refunded.amount_refunded = 0;
    const refund = { id: 're_wh_1', object: 'refund', amount: 400, charge: 'ch_wh_refail', status: 'failed' };
    for (const type of ['charge.refund.updated', 'refund.failed']) {
      expect((await send(event(type, refund))).body).toMatchObject({ received: true, stored: 1 });
    }
    expect((await revenue()).revenue_cents).toBe(before + 1000);
    const nameless = await send(event('refund.updated', { id: 're_wh_2', object: 'refund', status: 'failed' }));
    expect([nameless.status, nameless.body.error.message]).toEqual([400, 'The refund.updated event names no charge.']);
    // A refund of no charge (Stripe's `charge: null`, a customer balance refund) changes nothing of ours:
    // acknowledged, so Stripe does not redeliver it, and nothing stored.
    const chargeless = await send(event('refund.created', { id: 're_wh_3', object: 'refund', amount: 400, charge: null, status: 'succeeded' }));
    expect([chargeless.status, chargeless.body]).toEqual([200, { received: true, type: 'refund.created', stored: 0 }]);
    expect((await revenue()).revenue_cents).toBe(before + 1000);
    const chargelessDispute = await send(event('charge.dispute.created', { id: 'dp_wh_3', object: 'dispute', amount: 400, charge: null }));
    expect(chargelessDispute.status).toBe(400);
  });

  test('a charge read from the old account while the site is re-keyed to another is not stored after the purge: two accounts are never summed', async () => {
    const site = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    expect((await put(site, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
    await backfillState(site, 'completed');
    held({ id: 'ch_wh_oldacct', amount: 6000 });
    const release = stripe.holdNext('/v1/charges/ch_wh_oldacct');
    const asked = stripe.requests.length;
    const pending = send(event('charge.succeeded', charge('ch_wh_oldacct', { amount: 6000 })), { site: site.siteId });
    await until('the webhook to read the charge', async () => stripe.requests.slice(asked), (r) => r.some((q) => q.startsWith('GET /v1/charges/ch_wh_oldacct')));
    const other = 'sk_test_fifthAccount0001';
    stripe.keys.add(other);
    stripe.accounts.set(other, [{ id: 'ch_fifth_1', amount: 222, created: JUNE + 86_400 * 5 }]);
    expect((await put(site, { secret_key: other, webhook_secret: 'whsec_fifthAccount12345' })).status).toBe(200);
    await backfillState(site, 'completed');
    release();
    expect((await pending).body).toMatchObject({ received: true, stored: 0 });
    expect((await svc.api('GET', `/sites/${site.siteId}/overview${WINDOW}`, { token: site.token })).body.data).toMatchObject({ payments: 1, revenue_cents: 222 });
  });

  test('a charge read while the same account\'s key is rolled is stored: a roll is no purge, so nothing would read it again', async () => {
    const site = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    expect((await put(site, { secret_key: KEY, webhook_secret: WHSEC })).status).toBe(200);
    await backfillState(site, 'completed');
    held({ id: 'ch_wh_rolled', amount: 700 });
    const before = (await svc.api('GET', `/sites/${site.siteId}/overview${WINDOW}`, { token: site.token })).body.data.revenue_cents;
    const release = stripe.holdNext('/v1/charges/ch_wh_rolled');
    const asked = stripe.requests.length;
    const pending = send(event('charge.succeeded', charge('ch_wh_rolled', { amount: 700 })), { site: site.siteId });
    await until('the webhook to read the charge', async () => stripe.requests.slice(asked), (r) => r.some((q) => q.startsWith('GET /v1/charges/ch_wh_rolled')));
    const rolled = 'sk_test_rolledWebhook001';
    stripe.keys.add(rolled);
    const res = await put(site, { secret_key: rolled });
    expect(res.body.data).toMatchObject({ account: 'test secret key ...k001', backfill: { state: 'completed' } });
    release();
    expect((await pending).body).toMatchObject({ received: true, stored: 1 });
    expect((await svc.api('GET', `/sites/${site.siteId}/overview${WINDOW}`, { token: site.token })).body.data.revenue_cents).toBe(before + 700);
  });

  test('a key that may no longer read disputes: 503 saying to re-key, nothing stored; the redelivery after that stores it', async () => {
    held({ id: 'ch_wh_blind', amount: 900, disputes: [{ id: 'dp_wh_blind', amount: 900, status: 'lost' }] });
    const { revenue_cents: before, payments } = await revenue();
    const closed = event('charge.dispute.closed', { id: 'dp_wh_blind', object: 'dispute', charge: 'ch_wh_blind', status: 'lost' });
    stripe.disputesDenied.add(KEY);
    try {
      const refused = await send(closed);
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({ code: 'provider_unavailable', message: expect.stringContaining('re-key') });
    } finally {
      stripe.disputesDenied.delete(KEY);
    }
    expect(await revenue()).toMatchObject({ revenue_cents: before, payments });
    expect((await send(closed)).body).toMatchObject({ stored: 1 });
    // Stored, and wholly taken back by the lost dispute: one more payment, no more revenue.
    expect(await revenue()).toMatchObject({ revenue_cents: before, payments: payments + 1 });
  });

  test('an authorisation not captured yet counts as nothing; its capture counts what was captured', async () => {
    const before = await revenue();
    const auth = held({ id: 'ch_wh_auth', amount: 77_700, captured: false });
    expect((await send(event('charge.succeeded', charge('ch_wh_auth', { amount: 77_700, captured: false })))).status).toBe(200);
    expect(await revenue()).toMatchObject({ revenue_cents: before.revenue_cents, payments: before.payments });
    // Captured for less than was authorised (the rest is released): 50,000 is the revenue.
    Object.assign(auth, { captured: true, amount_captured: 50_000 });
    expect((await send(event('charge.captured', charge('ch_wh_auth', { captured: true })))).status).toBe(200);
    expect(await revenue()).toMatchObject({ revenue_cents: before.revenue_cents + 50_000, payments: before.payments + 1 });
  });

  test('Stripe unreachable: 503 provider_unavailable and nothing stored, so Stripe delivers again; the redelivery stores it', async () => {
    held({ id: 'ch_wh_later', amount: 700 });
    const before = (await revenue()).revenue_cents;
    const paid = event('charge.succeeded', charge('ch_wh_later', { amount: 700 }));
    stripe.failNext(1, '/v1/charges/ch_wh_later'); // the webhook's one try (no retries within Stripe's delivery)
    const refused = await send(paid);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('provider_unavailable');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await revenue()).revenue_cents).toBe(before);
    expect((await send(paid)).status).toBe(200);
    expect((await revenue()).revenue_cents).toBe(before + 700);
  });

  test('a charge the key cannot see is acknowledged and stores nothing; a signed event without an object id is 400, not a 500', async () => {
    const unseen = await send(event('charge.succeeded', charge('ch_wh_other_account')));
    expect(unseen.status).toBe(200);
    expect(unseen.body).toMatchObject({ received: true, stored: 0 });
    const bad = await send(event('charge.succeeded', { object: 'charge' }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('no object id') });
  });

  // Only the secret's holder can send these, but Stripe redelivers a 5xx for days: each is the sender's 400.
  const { created: _created, ...undated } = event('customer.subscription.updated', sub('sub_wh_shape'), { previous_attributes: { status: 'trialing' } });
  test.each([
    ['an empty object', {}, 'id'],
    ['an array', [], 'the body'],
    ['null', null, 'the body'],
    ['no created', undated, 'created'],
    ['a created that is text', { ...undated, created: 'abc' }, 'created'],
    ['a created in 1970', { ...undated, created: -5 }, 'created'],
    ['a created in the year 5138', { ...undated, created: 99_999_999_999_999 }, 'created'],
    ['no data object', { ...event('customer.subscription.created', {}), data: {} }, 'data.object'],
    ['previous_attributes that are not an object', event('customer.subscription.updated', sub('sub_wh_shape'), { previous_attributes: 'x' }), 'data.previous_attributes'],
  ])('a signed body with %s is 400 naming %s, never a 500', async (_label, payload, field) => {
    const res = await send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: expect.stringMatching(new RegExp(`^The body is not a Stripe event: ${field.replace('.', '\\.')} `)) });
  });

  test('signed bodies that are not JSON, or deeply nested, or whose items are not a list are refused or read safely', async () => {
    const notJson = await send(null, { raw: '{"id": "evt_x", ' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toEqual({ code: 'invalid_request', message: 'The body is not JSON: not a Stripe event.' });
    const deep = await send(null, { raw: '['.repeat(100_000) + ']'.repeat(100_000) });
    expect(deep.status).toBe(400);
    const oddItems = event('customer.subscription.updated', sub('sub_wh_items', { items: { data: [item(500)] } }), { previous_attributes: { items: { data: 'zz' } } });
    const res = await send(oddItems);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, stored: 0 });
  });

  test('subscription events become lifecycle events: start, upgrade, downgrade, pause, resume, trial conversion, end', async () => {
    const sends = [
      event('customer.subscription.created', sub('sub_wh')),
      event('customer.subscription.updated', sub('sub_wh', { items: { data: [item(2000)] } }), { previous_attributes: { items: { data: [item(1000)] } } }),
      event('customer.subscription.updated', sub('sub_wh', { items: { data: [item(500, 2)] } }), { previous_attributes: { items: { data: [item(2000)] } } }),
      event('customer.subscription.updated', sub('sub_wh', { pause_collection: { behavior: 'void' } }), { previous_attributes: { pause_collection: null } }),
      event('customer.subscription.updated', sub('sub_wh'), { previous_attributes: { pause_collection: { behavior: 'void' } } }),
      event('customer.subscription.updated', sub('sub_wh'), { previous_attributes: { status: 'trialing' } }),
      event('customer.subscription.updated', sub('sub_wh', { metadata: { a: 'b' } }), { previous_attributes: { metadata: {} } }),
      event('customer.subscription.deleted', sub('sub_wh', { status: 'canceled' })),
    ];
    for (const e of sends) expect((await send(e)).status).toBe(200);
    expect((await send(sends[1])).status).toBe(200); // a duplicate delivery
    const store = svc.running.ctx.store;
    const rows = await store.query<{ kind: string }>(
      `SELECT kind FROM ${store.table('lifecycle_events')} FINAL WHERE site_id = {s:UUID} AND is_deleted = 0 ORDER BY occurred_at, kind`, { s: t.siteId });
    expect(rows.map((r) => r.kind)).toEqual(['subscription_start', 'upgrade', 'downgrade', 'pause', 'resume', 'trial_conversion', 'subscription_end']);
  });

  test('events that change nothing are acknowledged and ignored', async () => {
    const res = await send(event('invoice.created', { id: 'in_1', object: 'invoice' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, stored: 0 });
  });
});

describe('disconnecting', () => {
  test('drops the connection (a second DELETE is 404); stored payments stay', async () => {
    const t = await svc.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const charges = juneCharges('dc').slice(0, 5);
    stripe.charges.push(...charges);
    try {
      expect((await put(t, { secret_key: KEY })).status).toBe(200);
      await backfillState(t, 'completed');
      const del = await svc.api('DELETE', `/sites/${t.siteId}/integrations/stripe`, { token: t.token });
      expect(del.status).toBe(200);
      expect(del.body.data).toEqual({ provider: 'stripe', deleted: true });
      expect(await connection(t)).toBeUndefined();
      expect((await svc.api('DELETE', `/sites/${t.siteId}/integrations/stripe`, { token: t.token })).status).toBe(404);
      const unknown = await svc.api('DELETE', `/sites/${t.siteId}/integrations/paddle`, { token: t.token });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toEqual({ code: 'not_found', message: expect.stringContaining('providers: stripe, search_console') });
      const overview = await svc.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
      expect(overview.body.data.payments).toBeGreaterThanOrEqual(4);
    } finally {
      stripe.charges = stripe.charges.filter((c) => !c.id.startsWith('ch_dc'));
    }
  });
});

describe('with Redis unreachable', () => {
  let down: TestService;
  beforeAll(async () => {
    down = await startTestService({ REDIS_URL: 'redis://127.0.0.1:1', TALLY_STRIPE_API_URL: stripe.url });
  });
  afterAll(() => down.stop());

  test('connecting still records a queued backfill (the reconciler queues it once Redis is back); re-sync is 503 and clears nothing', async () => {
    const t = await down.tenant({ scopes: ['revenue:write', 'analytics:read'] });
    const res = await down.api('PUT', `/sites/${t.siteId}/integrations/stripe`, { token: t.token, body: { secret_key: KEY } });
    expect(res.status).toBe(200);
    expect(res.body.data.backfill.state).toBe('queued');
    await down.running.ctx.store.insert('payments', [{ site_id: t.siteId, provider: 'stripe', payment_id: 'ch_down_1', visitor_id: '0',
      session_id: '0', amount_cents: 700, refunded_cents: 0, currency: 'USD', status: 'succeeded', paid_at: '2026-06-10 00:00:00.000', version: 1, is_deleted: 0 }]);
    const asked = stripe.requests.length;
    const resync = await down.api('POST', `/sites/${t.siteId}/integrations/stripe/resync`, { token: t.token });
    expect(resync.status).toBe(503);
    // Refused on Redis before the provider is called: no credential check against Stripe.
    expect(stripe.requests.length).toBe(asked);
    expect(resync.body.error.code).toBe('queue_unavailable');
    expect(Number(resync.headers['retry-after'])).toBeGreaterThan(0);
    const overview = await down.api('GET', `/sites/${t.siteId}/overview${WINDOW}`, { token: t.token });
    expect(overview.body.data).toMatchObject({ payments: 1, revenue_cents: 700 });
  });
});
