import { randomUUID } from 'node:crypto';
import { setClock } from '../../core/clock';
import { isoToCh } from '../../clickhouse/meta';
import { retentionCutoff } from '../../clickhouse/retention';
import type { Store } from '../../clickhouse/store';
import { visitorIdFor } from '../../ingest/hash';
import type { PurgeOutcome } from '../../workers/jobs/retention-purge';
import type { WorkerContext } from '../../workers/types';
import { GPTBOT, reportSuite, type Line, type ReportSuite } from './reports-support';
import type { Tenant } from '../support/harness';
import { expectIdleRerun, expectNewEventsFedOnce, mutationCommands } from '../support/retention';

/**
 * The retention purge on the real engine: rows before each organisation's cutoff go from every table
 * that holds per-site data, nothing at or after it does, other organisations keep theirs, every
 * report a window retention allows answers the same afterwards, and the rollup feeder neither feeds
 * an old block again nor misses a new one.
 *
 * Org A keeps 30 days: now 2026-05-20T12:00Z, reports clamp at 2026-04-20T12:00Z, cutoff 2026-04-19T00:00Z.
 * Org B keeps 10 days: cutoff 2026-05-09T00:00Z. Org C keeps the default 1095 days: nothing is old.
 */
const NOW = '2026-05-20T12:00:00Z';
const CUTOFF_A = '2026-04-19 00:00:00.000';
const CUTOFF_B = '2026-05-09 00:00:00.000';

let s: ReportSuite;
let store: Store;
let b: Tenant;
let c: Tenant;
let funnelId: string;
let firstRun: PurgeOutcome;

const at = (iso: string, l: Omit<Line, 'ts'>): Line => ({ ts: iso, ...l });

/** One session every 25 minutes from before A's cutoff until after the retention edge: it crosses both. */
function marathon(): Line[] {
  const out: Line[] = [];
  for (let t = Date.parse('2026-04-18T22:00:00Z'); t <= Date.parse('2026-04-20T14:00:00Z'); t += 25 * 60_000) {
    out.push(at(new Date(t).toISOString(), { visitor: 'marathon', path: out.length % 3 ? '/live' : '/docs' }));
  }
  return out;
}

const A_LINES: Line[] = [
  // Gone: seen only long before the cutoff.
  at('2026-03-01T10:00:00Z', { visitor: 'gone', path: '/old', referrer: 'https://www.google.com/', country: 'DE' }),
  at('2026-03-01T10:05:00Z', { visitor: 'gone', path: '/pricing' }),
  // Loyal: first seen before the cutoff, back inside the window.
  at('2026-03-05T09:00:00Z', { visitor: 'loyal', path: '/pricing', country: 'FR' }),
  at('2026-05-15T09:00:00Z', { visitor: 'loyal', path: '/pricing', referrer: 'https://news.ycombinator.com/', country: 'FR' }),
  at('2026-05-15T09:02:00Z', { visitor: 'loyal', name: 'Signup', path: '/pricing' }),
  at('2026-03-02T08:00:00Z', { visitor: 'crawler', path: '/old', user_agent: GPTBOT }),
  at('2026-05-18T08:00:00Z', { visitor: 'crawler', path: '/docs', user_agent: GPTBOT }),
  // Between the cutoff and the retention edge: kept, though no window allowed today reads it.
  at('2026-04-19T10:00:00Z', { visitor: 'margin', path: '/docs' }),
  // Old for B's cutoff, not for A's.
  at('2026-04-25T10:00:00Z', { visitor: 'mid', path: '/blog', referrer: 'https://twitter.com/', country: 'US' }),
  at('2026-04-25T10:01:00Z', { visitor: 'mid', path: '/pricing' }),
  at('2026-05-19T16:00:00Z', { visitor: 'w1', path: '/', referrer: 'https://www.google.com/', country: 'DE' }),
  at('2026-05-19T16:03:00Z', { visitor: 'w1', path: '/pricing' }),
  at('2026-05-19T16:05:00Z', { visitor: 'w1', name: 'Signup', path: '/pricing' }),
  at('2026-05-20T08:00:00Z', { visitor: 'w2', path: '/blog', query: 'utm_source=newsletter&utm_campaign=may', country: 'US' }),
  at('2026-05-20T11:30:00Z', { visitor: 'w3', path: '/', country: 'FR' }),
  ...marathon(),
];

const OTHER_LINES = (host: string): Line[] => [
  at('2026-03-01T10:00:00Z', { visitor: 'o1', path: '/x', host }),
  at('2026-04-25T10:00:00Z', { visitor: 'o2', path: '/y', host }),
  at('2026-05-15T10:00:00Z', { visitor: 'o1', path: '/z', host }),
];

/** Every report compared before and after the purge: each window retention allows, in several zones. */
const REPORTS: [string, Record<string, string>][] = [
  ['/overview', { period: 'last30d' }],
  ['/overview', { period: 'all' }],
  ['/overview', { from: '2026-04-20T12:00:00Z', to: '2026-05-21T00:00:00Z' }],
  ['/overview', { from: '2026-01-01T00:00:00Z', to: '2026-05-20T00:00:00Z' }],
  ['/overview', { period: 'last30d', tz: 'Pacific/Kiritimati' }],
  ['/overview', { period: 'last30d', tz: 'Pacific/Pago_Pago' }],
  ['/overview', { period: 'last30d', bots: 'included' }],
  ['/overview', { period: 'last30d', filter_path: '/pricing' }],
  ['/overview', { period: 'last30d', filter_country: 'FR' }],
  ['/timeseries', { period: 'last30d' }],
  ['/timeseries', { from: '2026-04-20T12:00:00Z', to: '2026-04-21T00:00:00Z' }],
  ['/timeseries', { period: 'all', tz: 'Pacific/Kiritimati' }],
  ['/breakdowns/path', { period: 'last30d' }],
  ['/breakdowns/path', { from: '2026-04-20T12:00:00Z', to: '2026-05-21T00:00:00Z' }],
  ['/breakdowns/referrer', { period: 'last30d' }],
  ['/breakdowns/entry_path', { period: 'all' }],
  ['/breakdowns/channel', { period: 'last30d' }],
  ['/breakdowns/goal', { period: 'last30d' }],
  ['/breakdowns/country', { period: 'last30d' }],
  ['/engagement', { period: 'last30d' }],
  ['/channel-quality', { period: 'last30d' }],
  ['/ai/crawlers', { period: 'last30d' }],
  ['/search/totals', { period: 'last30d' }],
  ['/search/terms', { period: 'all' }],
];

async function allReports(): Promise<unknown[]> {
  setClock(NOW);
  const out: unknown[] = [];
  for (const [path, params] of REPORTS) out.push([path, params, await s.ok(path, params)]);
  for (const qs of ['?period=last30d', '?period=all', '?from=2026-04-20T12:00:00Z&to=2026-05-21T00:00:00Z']) {
    const res = await s.svc.api('GET', `/sites/${s.t.siteId}/funnels/${funnelId}/report${qs}`, { token: s.t.token });
    expect(res.status).toBe(200);
    out.push(['funnel', qs, res.body]);
  }
  return out;
}

/** Rows per table of one site before and from a cutoff. */
const TABLES: [string, string][] = [
  ['events', 'ts'], ['session_slices', 'slice'], ['page_slices', 'slice'], ['session_totals', 'session_start'],
  ['first_seen', 'first_ts'], ['payments', 'paid_at'], ['lifecycle_events', 'occurred_at'], ['search_console', 'toDateTime64(date, 3, \'UTC\')'],
  ['alert_firings', 'fired_at'], ['alert_deliveries', 'at'],
];

async function rows(siteId: string, cutoff: string): Promise<Record<string, { before: number; from: number }>> {
  const out: Record<string, { before: number; from: number }> = {};
  for (const [table, col] of TABLES) {
    const [r] = await store.query<{ before: number; from: number }>(
      `SELECT countIf(${col} < {c:DateTime64(3, 'UTC')}) AS before, countIf(${col} >= {c:DateTime64(3, 'UTC')}) AS from
       FROM ${store.table(table)} WHERE site_id = {s:UUID}`, { s: siteId, c: cutoff });
    out[table] = { before: Number(r.before), from: Number(r.from) };
  }
  return out;
}

const mutationCount = async () => (await mutationCommands(store)).length;

async function payment(siteId: string, id: string, visitor: string, paidAt: string) {
  await store.insert('payments', [{
    site_id: siteId, provider: 'stripe', payment_id: id, visitor_id: visitorIdFor(siteId, visitor), session_id: '0',
    amount_cents: 1000, refunded_cents: 0, currency: 'USD', status: 'succeeded', paid_at: isoToCh(paidAt), version: 1, is_deleted: 0,
  }]);
}

async function perSiteExtras(siteId: string) {
  await store.insert('integrations', [{
    site_id: siteId, provider: 'search_console', credentials: '', webhook_secret: '', connected_at: isoToCh('2026-01-01T00:00:00Z'),
    backfill_state: 'completed', backfill_counts: '{}', backfill_started_at: null, backfill_finished_at: null, backfill_error: null, version: 1, is_deleted: 0,
  }]);
  await store.insert('search_console', ['2026-03-01', '2026-04-17', '2026-04-18', '2026-04-19', '2026-05-15'].map((date) => ({
    site_id: siteId, date, term: 'tally', hostname: 'x.example', path: '/', clicks: 1, impressions: 10, position_sum: 30, is_final: 1, version: 1,
  })));
  await store.insert('lifecycle_events', ['2026-03-01', '2026-05-15'].map((d) => ({
    site_id: siteId, provider: 'stripe', event_id: `ev_${d}`, kind: 'subscription_started', subscription_id: 'sub_1',
    occurred_at: `${d} 10:00:00.000`, version: 1, is_deleted: 0,
  })));
  await store.insert('alert_firings', ['2026-03-01', '2026-05-15'].map((d) => ({
    id: randomUUID(), alert_id: randomUUID(), site_id: siteId, fired_at: `${d} 10:00:00.000`, value: 1, threshold: 1,
  })));
  await store.insert('alert_deliveries', ['2026-03-01', '2026-05-15'].map((d) => ({
    firing_id: randomUUID(), site_id: siteId, outcome: 'sent', at: `${d} 10:01:00.000`,
  })));
}

async function setRetention(orgId: string, days: number) {
  const repos = s.svc.running.ctx.repos;
  await repos.orgs.put({ ...(await repos.getOrg(orgId))!, retention_days: days });
}

const workerCtx = () => ({ ...s.svc.running.ctx }) as unknown as WorkerContext;

let before: { reports: unknown[]; a: Awaited<ReturnType<typeof rows>>; b: Awaited<ReturnType<typeof rows>>; c: Awaited<ReturnType<typeof rows>>; mutations: number };

beforeAll(async () => {
  s = await reportSuite({ now: NOW, retentionDays: 30, scopes: ['analytics:read', 'goals:write', 'funnels:write', 'notes:write'] });
  store = s.svc.running.ctx.store;
  b = await s.svc.tenant();
  c = await s.svc.tenant();
  await setRetention(b.orgId, 10);
  await s.importLines(A_LINES);
  await s.importLines(OTHER_LINES(b.domain), b.siteId);
  await s.importLines(OTHER_LINES(c.domain), c.siteId);
  for (const site of [s.t.siteId, b.siteId, c.siteId]) await perSiteExtras(site);
  await payment(s.t.siteId, 'ch_old', 'gone', '2026-03-02T10:00:00Z');
  await payment(s.t.siteId, 'ch_new', 'loyal', '2026-05-15T10:00:00Z');
  await payment(b.siteId, 'ch_mid', 'o2', '2026-04-25T10:00:00Z');
  await payment(c.siteId, 'ch_old', 'o1', '2026-03-02T10:00:00Z');
  const funnel = await s.svc.api('POST', `/sites/${s.t.siteId}/funnels`, {
    token: s.t.token, body: { name: 'signup', steps: [{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }], window_seconds: 86400 },
  });
  expect(funnel.status).toBe(201);
  funnelId = funnel.body.data.id;
  const note = await s.svc.api('POST', `/sites/${s.t.siteId}/notes`, { token: s.t.token, body: { body: 'Launch', occurred_at: '2026-03-10T12:00:00Z' } });
  expect(note.status).toBe(201);

  before = {
    reports: await allReports(), a: await rows(s.t.siteId, CUTOFF_A), b: await rows(b.siteId, CUTOFF_B), c: await rows(c.siteId, CUTOFF_A),
    mutations: await mutationCount(),
  };
  setClock(NOW);
  firstRun = await s.svc.admin<PurgeOutcome>('retention purge', {});
});
afterAll(() => s.stop());

test('the cutoff is the start of the UTC day of now - retention, less a day', () => {
  expect(new Date(retentionCutoff(Date.parse(NOW), 30)).toISOString()).toBe('2026-04-19T00:00:00.000Z');
  expect(new Date(retentionCutoff(Date.parse('2026-05-20T00:00:00Z'), 30)).toISOString()).toBe('2026-04-19T00:00:00.000Z');
  expect(new Date(retentionCutoff(Date.parse('2026-05-19T23:59:59.999Z'), 30)).toISOString()).toBe('2026-04-18T00:00:00.000Z');
});

test('the fixture has rows on both sides of every cutoff, in every table', () => {
  for (const [table] of TABLES) {
    expect([table, before.a[table].before > 0, before.a[table].from > 0]).toEqual([table, true, true]);
    expect([table, before.b[table].before > 0]).toEqual([table, true]);
  }
});

test('rows before the cutoff are gone from every per-site table; rows from it are kept', async () => {
  const after = await rows(s.t.siteId, CUTOFF_A);
  for (const [table] of TABLES) {
    const expectedBefore = table === 'session_totals' ? 1 : table === 'first_seen' ? 3 : 0;
    // session_totals keeps the session that crosses the cutoff; first_seen keeps, undated, the
    // visitors seen again since (the loyal one, the crawler, the marathon session's).
    expect([table, after[table].before]).toEqual([table, expectedBefore]);
    expect([table, after[table].from]).toEqual([table, before.a[table].from]);
  }
  const firstSeen = await store.query<{ v: string; t: string }>(
    `SELECT toString(visitor_id) AS v, toString(first_ts) AS t FROM ${store.table('first_seen')} FINAL WHERE site_id = {s:UUID} AND first_ts < {c:DateTime64(3, 'UTC')} ORDER BY v`,
    { s: s.t.siteId, c: CUTOFF_A });
  expect(firstSeen.map((r) => r.v).sort()).toEqual(['crawler', 'loyal', 'marathon'].map((v) => s.visitorId(v)).sort());
  expect(new Set(firstSeen.map((r) => r.t))).toEqual(new Set(['1970-01-01 00:00:00.000']));
  const marathonRow = await store.query(`SELECT session_start FROM ${store.table('session_totals')} WHERE site_id = {s:UUID} AND session_start < {c:DateTime64(3, 'UTC')}`, { s: s.t.siteId, c: CUTOFF_A });
  expect(marathonRow).toEqual([{ session_start: '2026-04-18 22:00:00.000' }]);
});

test('each organisation is purged at its own cutoff; one with nothing old is untouched', async () => {
  const bAfter = await rows(b.siteId, CUTOFF_B);
  for (const [table] of TABLES) {
    expect([table, bAfter[table].before]).toEqual([table, table === 'first_seen' ? 1 : 0]);
    expect([table, bAfter[table].from]).toEqual([table, before.b[table].from]);
  }
  // A's rows between the two cutoffs (the 25 April visit) are A's own and stay.
  const aMid = await store.query(`SELECT count() AS n FROM ${store.table('events')} WHERE site_id = {s:UUID} AND toDate(ts) = '2026-04-25'`, { s: s.t.siteId });
  expect(aMid).toEqual([{ n: 2 }]);
  expect(await rows(c.siteId, CUTOFF_A)).toEqual(before.c);
  const byOrg = new Map(firstRun.orgs.map((o) => [o.org_id, o]));
  expect(byOrg.get(s.t.orgId)).toMatchObject({ retention_days: 30, cutoff: '2026-04-19T00:00:00.000Z', sites: 1 });
  expect(byOrg.get(s.t.orgId)!.deleted).toMatchObject({ events: before.a.events.before, payments: 1, search_console: 3, lifecycle_events: 1, alert_firings: 1, alert_deliveries: 1 });
  expect(byOrg.get(b.orgId)!.deleted.events).toBe(before.b.events.before);
  expect(Object.values(byOrg.get(c.orgId)!.deleted).every((n) => n === 0)).toBe(true);
});

test('every report a window retention allows answers as before', async () => {
  // ... with March's masked rows freed: the comparison covers a compacted partition too.
  expect(firstRun.compacted.events).toBeGreaterThan(0);
  expect((await store.query(`SELECT table, command FROM system.mutations WHERE database = {db:String} AND command LIKE '%APPLY DELETED MASK%' AND table = 'events'`, { db: store.database })))
    .toEqual([{ table: 'events', command: "(APPLY DELETED MASK IN PARTITION ID '202603')" }]);
  expect(await allReports()).toEqual(before.reports);
});

test('notes are the user\'s own writing and are kept', async () => {
  const res = await s.svc.api('GET', `/sites/${s.t.siteId}/notes?from=2026-01-01T00:00:00Z&to=2026-05-21T00:00:00Z`, { token: s.t.token });
  expect(res.status).toBe(200);
  const all = await store.query(`SELECT body FROM ${store.table('notes')} FINAL WHERE site_id = {s:UUID} AND is_deleted = 0`, { s: s.t.siteId });
  expect(all).toEqual([{ body: 'Launch' }]);
});

test('a second run finds nothing and issues no mutation', async () => {
  expect(await mutationCount()).toBeGreaterThan(before.mutations);
  await expectIdleRerun(workerCtx(), store, NOW);
});

test('after a purge new events are fed exactly once, and a restarted feeder feeds nothing again', async () => {
  setClock(NOW);
  const fed = await expectNewEventsFedOnce(store, s.t.siteId, () => s.importLines([
    at('2026-05-20T10:00:00Z', { visitor: 'loyal', path: '/pricing' }),
    at('2026-05-20T10:10:00Z', { visitor: 'gone', path: '/pricing' }),
    at('2026-05-20T10:20:00Z', { visitor: 'fresh', path: '/' }),
    at('2026-05-20T10:21:00Z', { visitor: 'fresh', name: 'Signup', path: '/' }),
  ]), { events: 4, views: 3 });
  const today = (await s.ok('/overview', { from: '2026-05-20T10:00:00Z', to: '2026-05-20T11:00:00Z' })).data;
  // The loyal visitor is still returning; the one absent longer than retention comes back as new.
  expect(today).toMatchObject({ visitors: 3, views: 3, new_visitors: 2 });
  // A new feeder reads the watermark from storage, as after a restart: nothing is fed a second time.
  await fed.restartFeeder();
  expect((await s.ok('/overview', { from: '2026-05-20T10:00:00Z', to: '2026-05-20T11:00:00Z' })).data).toEqual(today);
});

test('the command purges one organisation with --org, and refuses an unknown one', async () => {
  setClock(NOW);
  const one = await s.svc.admin<PurgeOutcome>('retention purge', { org: c.orgId });
  expect(one.orgs.map((o) => o.org_id)).toEqual([c.orgId]);
  await expect(s.svc.admin('retention purge', { org: randomUUID() })).rejects.toMatchObject({ status: 404, code: 'not_found' });
  await expect(s.svc.admin('retention purge', { org: 'nope' })).rejects.toThrow(/--org must be a uuid/);
});
