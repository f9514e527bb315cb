import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Stripe from 'stripe';
import { retentionCutoff } from '../../clickhouse/retention';
import { request, type HttpResult } from '../support/http';
import { apiCall, cli, collect, firingsOnceFired, makeTenant, startServerMode, type ServerMode, type SmTenant, type TallyProc } from '../support/server-mode';
import { startSmtpDouble, type SmtpDouble } from '../support/smtp-double';
import { startStripeDouble, type DoubleCharge, type StripeDouble } from '../support/stripe-double';
import { waitFor } from '../support/wait';

/**
 * Server mode's multi-process work end to end (test/support/server-mode.ts: the built dist/main.js on
 * ClickHouse's HTTP interface over the real engine, one database, one Redis prefix): two `api`
 * processes and two `worker`s. The retention purge run on both api processes at once, Stripe connected
 * on one and imported by a worker, its webhooks on either, settings edited on both at once, alert
 * mail with two workers running.
 */
const DAY = 86_400_000;
const KEY = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc';
const WHSEC = 'whsec_test1234567890abcdef';
const FAILURE_BUDGET = 10;

let sm: ServerMode;
let smtp: SmtpDouble;
let stripe: StripeDouble;
let api1: TallyProc;
let api2: TallyProc;
let worker1: TallyProc;
let worker2: TallyProc;
let mailed: SmTenant;
let alertId = '';

const api = (p: TallyProc, t: SmTenant, method: string, apiPath: string, body?: unknown): Promise<HttpResult> =>
  apiCall(p, method, apiPath, t.token, body);

/** A count straight from storage (bound values), for what no report shows. */
async function count(sql: string, params: Record<string, unknown>): Promise<number> {
  const rows = await (await sm.direct.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<{ n: string }>();
  return Number(rows[0].n);
}

beforeAll(async () => {
  [sm, smtp, stripe] = await Promise.all([startServerMode(), startSmtpDouble(), startStripeDouble()]);
  stripe.keys.add(KEY);
  const env = { TALLY_STRIPE_API_URL: stripe.url, TALLY_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, TALLY_MAIL_FROM: 'tally@example.com' };
  // The proxy's forwarded address is believed: the lockout test comes from an address of its own.
  const apiEnv = { ...env, TALLY_TRUST_PROXY: '127.0.0.1', TALLY_AUTH_FAILURES_PER_MINUTE: String(FAILURE_BUDGET) };
  [api1, api2, worker1, worker2] = await sm.startAll([
    { name: 'api1', role: 'api', env: apiEnv }, { name: 'api2', role: 'api', env: apiEnv },
    { name: 'worker1', role: 'worker', env }, { name: 'worker2', role: 'worker', env },
  ]);
  // Made first: the workers evaluate an alert from the first minute boundary after its creation, and
  // the tests before the last one wait out most of that minute.
  // The visit comes first, so the first evaluation after the alert's creation already finds it in
  // its window (a visit landing just after a minute boundary would wait for the next one).
  mailed = await makeTenant(api1, 'Mailed');
  expect(await collect(api1, mailed.domain, `https://${mailed.domain}/`)).toBe(202);
  const alert = await api(api2, mailed, 'POST', `/sites/${mailed.siteId}/alerts`, { name: 'Any visitor', trigger_type: 'visitors_spike', threshold: 1, window_minutes: 60 });
  expect(alert.status).toBe(201);
  alertId = alert.body.data.id;
}, 120_000);

afterAll(async () => {
  await sm?.close();
  await smtp?.stop();
  await stripe?.close();
});

describe('the retention purge', () => {
  let t: SmTenant;
  const now = Date.now();
  const cutoff = retentionCutoff(now, 30);
  const cutoffCh = new Date(cutoff).toISOString().replace('T', ' ').replace('Z', '');
  const old = new Date(now - 60 * DAY).toISOString();
  const REPORTS = [
    '/overview?period=last30d', '/overview?period=last7d&tz=Pacific/Kiritimati', '/breakdowns/path?period=last30d&limit=100',
    '/timeseries?period=last30d&interval=day', '/breakdowns/referrer?period=last30d',
  ];
  const readAll = (p: TallyProc) => Promise.all(REPORTS.map(async (r) => {
    const res = await api(p, t, 'GET', `/sites/${t.siteId}${r}`);
    expect(res.status).toBe(200);
    return res.body.data;
  }));

  beforeAll(async () => {
    t = await makeTenant(api1, 'Thirty days', { retentionDays: 30 });
    const line = (ts: string, p: string, visitor: string, referrer?: string) =>
      JSON.stringify({ ts, name: 'pageview', url: `https://${t.domain}${p}`, visitor, ...(referrer ? { referrer } : {}) });
    const file = path.join(sm.tmp, 'old.ndjson');
    writeFileSync(file, [
      line(old, '/old/1', 'gone', 'https://www.google.com/'), line(new Date(Date.parse(old) + 300_000).toISOString(), '/old/2', 'gone'),
      line(old, '/old/loyal', 'loyal'),
      line(new Date(now - 2 * DAY).toISOString(), '/recent/loyal', 'loyal', 'https://news.ycombinator.com/'),
      line(new Date(now - 3 * DAY).toISOString(), '/recent/a', 'a'),
    ].join('\n') + '\n');
    const imported = await cli(sm, api2, ['events', 'import', '--site', t.siteId, '--file', file]);
    expect(imported.stderr).toBe('');
    for (let i = 0; i < 3; i++) expect(await collect(i % 2 ? api1 : api2, t.domain, `https://${t.domain}/today/${i}`)).toBe(202);
  });

  test('run on both api processes at once: one purges over HTTP (lightweight DELETE, UPDATE with mutations_sync), the other answers 409', async () => {
    const before = await readAll(api2);
    const eventsOf = (where: string) => count(`SELECT count() AS n FROM ${sm.database}.events WHERE site_id = {s:UUID} AND ${where}`,
      { s: t.siteId, c: cutoffCh });
    expect(await eventsOf('ts < {c:DateTime64(3)}')).toBe(3);
    const total = await eventsOf('1');

    const runs = await Promise.all([api1, api2].map((p) => cli(sm, p, ['retention', 'purge', '--org', t.orgId])));
    const ok = runs.filter((r) => r.status === 0);
    const refused = runs.filter((r) => r.status !== 0);
    expect([ok.length, refused.length]).toEqual([1, 1]);
    expect(JSON.parse(refused[0].stderr).error.code).toBe('conflict');
    const outcome = JSON.parse(ok[0].stdout);
    expect(outcome.orgs[0]).toMatchObject({ org_id: t.orgId, retention_days: 30, cutoff: new Date(cutoff).toISOString(), sites: 1 });
    expect(outcome.deleted).toMatchObject({ events: 3, first_seen: 1, first_seen_undated: 1 });

    // Gone from storage: the old events, and every first-visit time before the cutoff (loyal's is undated).
    expect(await eventsOf('ts < {c:DateTime64(3)}')).toBe(0);
    expect(await eventsOf('1')).toBe(total - 3);
    const firstSeen = (where: string) => count(`SELECT count() AS n FROM ${sm.database}.first_seen FINAL WHERE site_id = {s:UUID} AND ${where}`,
      { s: t.siteId, c: cutoffCh });
    expect(await firstSeen(`first_ts < {c:DateTime64(3)} AND first_ts > toDateTime64(0, 3, 'UTC')`)).toBe(0);
    expect(await firstSeen(`first_ts = toDateTime64(0, 3, 'UTC')`)).toBe(1);
    // Every window retention allows answers as before, on the other process and on this one.
    expect(await readAll(api1)).toEqual(before);
    expect(await readAll(api2)).toEqual(before);

    // A second run has nothing left: no mutation.
    const again = await cli(sm, api2, ['retention', 'purge', '--org', t.orgId]);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout).mutations).toBe(0);
  }, 90_000);

  test('events after the purge are fed once, whichever process stored them', async () => {
    const overview = async (p: TallyProc) => (await api(p, t, 'GET', `/sites/${t.siteId}/overview?period=last24h`)).body.data.views as number;
    const before = await overview(api1);
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => collect(i % 2 ? api1 : api2, t.domain, `https://${t.domain}/after/${i}`)));
    expect(statuses.every((s) => s === 202)).toBe(true);
    expect(await overview(api1)).toBe(before + 10);
    expect(await overview(api2)).toBe(before + 10);
  });
});

test('events posted to both api processes while both read reports: each report counts every event acknowledged before it, and none twice', async () => {
  const t = await makeTenant(api1, 'Busy');
  let sent = 0;
  let acked = 0;
  let writing = true;
  const seen: { low: number; views: number; high: number }[] = [];
  const reader = async (p: TallyProc) => {
    // At least three reads each, also when the writes finish first on a loaded machine (a read after
    // the last write must count all 300: low = high = 300).
    for (let reads = 0; writing || reads < 3; reads++) {
      const low = acked;
      const res = await api(p, t, 'GET', `/sites/${t.siteId}/overview?period=last24h`);
      expect(res.status).toBe(200);
      seen.push({ low, views: res.body.data.views, high: sent });
    }
  };
  const writer = async () => {
    for (let wave = 0; wave < 30; wave++) {
      await Promise.all(Array.from({ length: 10 }, async (_, i) => {
        sent++;
        expect(await collect((wave + i) % 2 ? api1 : api2, t.domain, `https://${t.domain}/busy/${i}`)).toBe(202);
        acked++;
      }));
    }
    writing = false;
  };
  await Promise.all([writer(), reader(api1), reader(api2)]);
  expect(seen.length).toBeGreaterThan(4);
  expect(seen.filter((s) => s.views < s.low || s.views > s.high)).toEqual([]);
  const raw = await count(`SELECT count() AS n FROM ${sm.database}.events WHERE site_id = {s:UUID}`, { s: t.siteId });
  expect(raw).toBe(300);
  for (const p of [api1, api2]) expect((await api(p, t, 'GET', `/sites/${t.siteId}/overview?period=last24h`)).body.data.views).toBe(300);
}, 90_000); // 300 events and dozens of reports through three processes: slow when the suite shares the two cores

test('an address that spent its failed-authentication budget is refused lookups on both api processes', async () => {
  const t = await makeTenant(api1, 'Locked out', { scopes: 'analytics:read' });
  const from = (p: TallyProc, token: string) =>
    request('GET', `https://127.0.0.1:${p.httpsPort}/api/v1/sites`, { token, headers: { 'x-forwarded-for': '203.0.113.9' } });
  const bad = 'tly_' + 'x'.repeat(40);
  const spent = await Promise.all(Array.from({ length: FAILURE_BUDGET }, (_, i) => from(i % 2 ? api1 : api2, bad)));
  expect(spent.map((r) => r.status)).toEqual(Array(FAILURE_BUDGET).fill(401));
  const refused = await from(api1, bad);
  expect([refused.status, refused.body.error.code]).toEqual([429, 'rate_limited']);
  // api2 refused nothing itself, but the count is shared: a key neither process resolved lately is
  // refused from that address like any other token (docs/AUTH.md), on api2 as on api1.
  for (const p of [api2, api1]) {
    const r = await from(p, t.token);
    expect([r.status, r.body.error?.code]).toEqual([429, 'rate_limited']);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  }
  // From anywhere else the key works, and once resolved it works from the refused address too.
  expect((await apiCall(api2, 'GET', '/sites', t.token)).status).toBe(200);
  expect((await from(api2, t.token)).status).toBe(200);
});

test('the widget is served by either api process; switched off on one it is gone from the other at once; views count on both', async () => {
  const t = await makeTenant(api1, 'Embedded');
  expect(await collect(api2, t.domain, `https://${t.domain}/`)).toBe(202); // switching on needs an event
  const on = await api(api1, t, 'PUT', `/sites/${t.siteId}/widget`, { type: 'recent', metric: 'views', enabled: true });
  expect(on.status).toBe(200);
  const slug = on.body.data.slug as string;
  const card = (p: TallyProc, file: string) => request('GET', `http://127.0.0.1:${p.httpPort}/widget/${file}`);
  expect((await card(api2, slug)).status).toBe(200);
  expect((await card(api1, slug)).status).toBe(200);
  expect((await card(api2, `${slug}.json`)).status).toBe(200);
  // Views are batched per process and written once a second: the other process reads them after that
  // (waited for up to 15 s: five processes share the two cores here).
  await waitFor('both views counted on api1', async () => (await api(api1, t, 'GET', `/sites/${t.siteId}/widget`)).body.data.view_count === 2);
  expect((await api(api2, t, 'PUT', `/sites/${t.siteId}/widget`, { enabled: false })).status).toBe(200);
  expect((await card(api1, `${slug}.json`)).status).toBe(404);
  expect((await card(api1, slug)).status).toBe(404);
});

test('settings PATCHes of different fields on the two api processes at once both land', async () => {
  const t = await makeTenant(api1, 'Edited twice');
  for (let round = 0; round < 3; round++) {
    const [a, b] = await Promise.all([
      api(api1, t, 'PATCH', `/sites/${t.siteId}/settings`, { excluded_paths: [`/a/${round}/**`] }),
      api(api2, t, 'PATCH', `/sites/${t.siteId}/settings`, { name: `Name ${round}` }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    for (const p of [api1, api2]) {
      const read = await api(p, t, 'GET', `/sites/${t.siteId}/settings`);
      expect(read.body.data).toMatchObject({ excluded_paths: [`/a/${round}/**`], name: `Name ${round}` });
    }
  }
});

describe('Stripe', () => {
  let t: SmTenant;
  const created = Math.floor((Date.now() - 2 * DAY) / 1000);
  const charges: DoubleCharge[] = Array.from({ length: 120 }, (_, i) => ({ id: `ch_sm${String(i).padStart(4, '0')}`, amount: 1000 + i, created: created + i * 60 }));
  const net = (cs: DoubleCharge[]) => cs.reduce((sum, c) => sum + c.amount - (c.amount_refunded ?? 0), 0);
  const revenue = async (p: TallyProc) => (await api(p, t, 'GET', `/sites/${t.siteId}/overview?period=last7d`)).body.data;
  const connection = async (p: TallyProc) =>
    (await api(p, t, 'GET', '/integrations')).body.data.find((c: { site_id: string }) => c.site_id === t.siteId);

  beforeAll(async () => {
    t = await makeTenant(api1, 'Paid', { scopes: 'revenue:write,analytics:read' });
    stripe.charges.push(...charges);
  });

  test('connected through one api process, imported by a worker, reported by the other api process', async () => {
    const res = await api(api1, t, 'PUT', `/sites/${t.siteId}/integrations/stripe`, { secret_key: KEY, webhook_secret: WHSEC });
    expect(res.status).toBe(200);
    let state: { backfill: { state: string; counts: Record<string, number> } } | undefined;
    await waitFor('the backfill to complete', async () => (state = await connection(api2))?.backfill.state === 'completed', 30_000);
    expect(state!.backfill.counts).toMatchObject({ payments: 120 });
    expect(await revenue(api2)).toMatchObject({ payments: 120, revenue_cents: net(charges) });
  }, 75_000);

  test('one notification delivered to both api processes at once, three times, is stored once and seen by both', async () => {
    const charge: DoubleCharge = { id: 'ch_sm_hook', amount: 5000, created: Math.floor(Date.now() / 1000) - 60 };
    stripe.charges.push(charge);
    const body = JSON.stringify({
      id: 'evt_sm_1', object: 'event', type: 'charge.succeeded', created: charge.created,
      data: { object: { id: charge.id, object: 'charge', amount: 5000, amount_refunded: 0, currency: 'usd', status: 'succeeded', created: charge.created, metadata: {}, payment_intent: null } },
    });
    const send = (p: TallyProc) => fetch(`http://127.0.0.1:${p.httpPort}/webhooks/stripe/${t.siteId}`, {
      method: 'POST', body, headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: WHSEC }) },
    });
    const answers = await Promise.all([api1, api2, api1, api2, api1, api2].map(send));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const p of [api1, api2]) expect(await revenue(p)).toMatchObject({ payments: 121, revenue_cents: net(charges) + 5000 });
  });
});

test('two workers: the alert fires once and its firing is mailed once', async () => {
  const firings = await firingsOnceFired(api1, mailed.token, mailed.siteId, alertId);
  await waitFor('the mail', () => smtp.mails.length > 0, 15_000);
  // Time for a second worker's delivery, if one were coming.
  await new Promise((r) => setTimeout(r, 2000));
  expect(firings.body.data).toHaveLength(1);
  expect(smtp.mails).toHaveLength(1);
  expect(smtp.mails[0].to).toEqual([mailed.email]);
  for (const w of [worker1, worker2]) expect(w.child.exitCode).toBeNull();
}, 150_000);
