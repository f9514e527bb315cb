import { setClock } from '../../core/clock';
import { evaluateAlerts, type FigureSource } from '../../workers/jobs/alerts';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/**
 * The alert evaluator against real chDB and the real reports: events imported through the admin
 * command, the clock frozen and moved forward, evaluateAlerts called directly. (The scheduled job
 * may evaluate in between; firings are edge-triggered and keyed by minute, so it changes nothing.)
 */
let svc: TestService;
let t: Tenant;
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const alerts: Record<string, string> = {};

const line = (ts: string, visitor: string, name = 'pageview') =>
  JSON.stringify({ ts, name, url: `https://${t.domain}/`, visitor, user_agent: UA });

beforeAll(async () => {
  setClock('2026-06-01T09:00:00Z');
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['alerts:write', 'analytics:read'] });
  const lines = [
    // 10:00-11:00: five visitors, two of them sign up.
    ...[1, 2, 3, 4, 5].map((v) => line(`2026-06-01T10:${String(5 + v * 5).padStart(2, '0')}:00Z`, `a${v}`)),
    line('2026-06-01T10:40:00Z', 'a1', 'Signup'), line('2026-06-01T10:45:00Z', 'a2', 'Signup'),
    // 11:00-12:00: one visitor. 12:00-13:00: six.
    line('2026-06-01T11:30:00Z', 'b1'),
    ...[1, 2, 3, 4, 5, 6].map((v) => line(`2026-06-01T12:${String(v * 5).padStart(2, '0')}:00Z`, `c${v}`)),
  ];
  const imported = await svc.admin('events import', { site: t.siteId }, lines.join('\n'));
  expect(imported).toMatchObject({ imported: lines.length, rejected: 0 });
  await svc.running.ctx.store.insert('payments', [{
    site_id: t.siteId, provider: 'stripe', payment_id: 'pi_alert', visitor_id: 0, session_id: 0, amount_cents: 1500, refunded_cents: 0,
    currency: 'USD', status: 'succeeded', paid_at: '2026-06-01 10:30:00.000', version: 1, is_deleted: 0,
  }]);
  const create = async (key: string, body: object, token = t.token) => {
    const res = await svc.api('POST', `/sites/${t.siteId}/alerts`, { token, body: { name: key, window_minutes: 60, ...body } });
    expect(res.status).toBe(201);
    alerts[key] = res.body.data.id;
  };
  await create('spike', { trigger_type: 'visitors_spike', threshold: 4 });
  await create('signup', { trigger_type: 'goal', goal_name: 'Signup', threshold: 2 });
  await create('drop', { trigger_type: 'traffic_drop', threshold_mode: 'percent_change', threshold: 50 });
  await create('revenue', { trigger_type: 'revenue', threshold: 1000 });
  await create('off', { trigger_type: 'visitors_spike', threshold: 1, enabled: false });
  // Made by a member who then leaves: the alert stays the site's and keeps firing.
  const member = await svc.admin<{ id: string }>('user create', { org: t.orgId, email: `gone-${Date.now()}@example.com`, role: 'member' });
  const key = await t.key({ scopes: ['alerts:write', 'analytics:read'], userId: member.id });
  await create('orphan', { trigger_type: 'visitors_spike', threshold: 4 }, key.token);
  await svc.admin('user remove', { org: t.orgId, user: member.id });
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

async function firings(name: string): Promise<string[]> {
  const res = await svc.api('GET', `/sites/${t.siteId}/alerts/${alerts[name]}/firings`, { token: t.token });
  expect(res.status).toBe(200);
  return res.body.data.map((f: { fired_at: string }) => f.fired_at);
}

async function evaluateAt(iso: string) {
  setClock(iso);
  const results = await evaluateAlerts(svc.running.ctx);
  return new Map(results.map((r) => [Object.keys(alerts).find((k) => alerts[k] === r.alert_id)!, r]));
}

test('fires once on a crossing, not again while the condition holds, and again on the next crossing', async () => {
  const first = await evaluateAt('2026-06-01T11:00:00Z');
  expect(first.get('spike')).toMatchObject({ value: 5, holds: true });
  expect(first.get('signup')).toMatchObject({ value: 2, holds: true });
  expect(first.get('revenue')).toMatchObject({ value: 1500, holds: true });
  expect(first.get('drop')).toMatchObject({ value: 5, holds: false }); // nothing before 10:00: no percentage
  expect(first.has('off')).toBe(false);
  expect(await firings('spike')).toEqual(['2026-06-01T11:00:00.000Z']);

  // Still holding a minute later, and evaluated twice in the same minute: no new firing.
  await evaluateAt('2026-06-01T11:00:40Z');
  const holding = await evaluateAt('2026-06-01T11:01:00Z');
  expect(holding.get('spike')).toMatchObject({ value: 5, holds: true, fired: false });
  expect(await firings('spike')).toEqual(['2026-06-01T11:00:00.000Z']);
  expect(await firings('signup')).toEqual(['2026-06-01T11:00:00.000Z']);
  expect(await firings('revenue')).toEqual(['2026-06-01T11:00:00.000Z']);

  // 11:00-12:00 has one visitor: the spike re-arms and traffic fell by 80 %.
  const quiet = await evaluateAt('2026-06-01T12:00:00Z');
  expect(quiet.get('spike')).toMatchObject({ value: 1, holds: false });
  expect(quiet.get('drop')).toMatchObject({ value: 1, holds: true });
  expect(await firings('drop')).toEqual(['2026-06-01T12:00:00.000Z']);

  // 12:00-13:00 has six: a second crossing fires again.
  await evaluateAt('2026-06-01T13:00:00Z');
  expect(await firings('spike')).toEqual(['2026-06-01T13:00:00.000Z', '2026-06-01T11:00:00.000Z']);
  expect(await firings('signup')).toEqual(['2026-06-01T11:00:00.000Z']);
  expect(await firings('off')).toEqual([]);
});

test('last_fired_at is set from the latest firing; the leaver\'s alert fired like any other', async () => {
  const list = await svc.api('GET', `/sites/${t.siteId}/alerts?limit=10`, { token: t.token });
  const byName = new Map(list.body.data.map((a: { name: string }) => [a.name, a]));
  expect(byName.get('spike')).toMatchObject({ last_fired_at: '2026-06-01T13:00:00.000Z' });
  expect(byName.get('drop')).toMatchObject({ last_fired_at: '2026-06-01T12:00:00.000Z' });
  expect(byName.get('off')).toMatchObject({ last_fired_at: null, enabled: false });
  expect(byName.get('orphan')).toMatchObject({ last_fired_at: '2026-06-01T13:00:00.000Z' });
  expect(await firings('orphan')).toHaveLength(2);
  const f = (await svc.api('GET', `/sites/${t.siteId}/alerts/${alerts.spike}/firings`, { token: t.token })).body.data[0];
  expect(f).toMatchObject({ alert_id: alerts.spike, value: 6, threshold: 4 });
  // A percent_change firing records the change it compared (a fall of 80 %), not the raw figure (1).
  const drop = (await svc.api('GET', `/sites/${t.siteId}/alerts/${alerts.drop}/firings`, { token: t.token })).body.data[0];
  expect(drop).toMatchObject({ value: 80, threshold: 50 });
});

test('an edit to what a firing alert watches re-arms it; an alert edited during a run keeps what the edit left', async () => {
  // spike fired at 13:00 and still holds (six visitors in the last hour).
  expect((await svc.api('PATCH', `/sites/${t.siteId}/alerts/${alerts.spike}`, { token: t.token, body: { threshold: 5 } })).status).toBe(200);
  expect((await evaluateAt('2026-06-01T13:02:00Z')).get('spike')).toMatchObject({ value: 6, fired: true });
  expect(await firings('spike')).toEqual(['2026-06-01T13:02:00.000Z', '2026-06-01T13:00:00.000Z', '2026-06-01T11:00:00.000Z']);
  // Renaming is not a new condition: no re-arm.
  await svc.api('PATCH', `/sites/${t.siteId}/alerts/${alerts.spike}`, { token: t.token, body: { name: 'spike renamed' } });
  expect((await evaluateAt('2026-06-01T13:03:00Z')).get('spike')).toMatchObject({ fired: false });

  // Switched off while the run measures it: the run's verdict is dropped, the cleared edge stays.
  // (signup re-armed after 11:00; the figure handed to the run makes it cross now.)
  setClock('2026-06-01T13:04:00Z');
  const signup = alerts.signup;
  const run = await evaluateAlerts(svc.running.ctx, async (_store, _site, _days, alert) => {
    if (alert.id === signup) await svc.api('PATCH', `/sites/${t.siteId}/alerts/${signup}`, { token: t.token, body: { enabled: false } });
    return 100;
  });
  expect(run.find((r) => r.alert_id === signup)).toMatchObject({ fired: true });
  expect(await firings('signup')).toEqual(['2026-06-01T11:00:00.000Z']);
  expect((await svc.running.ctx.store.query<{ firing: number }>(
    `SELECT firing FROM ${svc.running.ctx.store.table('alert_state')} FINAL WHERE alert_id = {a:UUID}`, { a: signup }))[0]).toEqual({ firing: 0 });
});

test('an alert made after the minute boundary is first measured at the next one (never fired before it existed)', async () => {
  setClock('2026-06-01T14:00:30Z');
  const res = await svc.api('POST', `/sites/${t.siteId}/alerts`, { token: t.token, body: { name: 'late', trigger_type: 'traffic_drop', threshold: 100 } });
  alerts.late = res.body.data.id;
  expect((await evaluateAt('2026-06-01T14:00:40Z')).has('late')).toBe(false);
  expect((await evaluateAt('2026-06-01T14:01:00Z')).get('late')).toMatchObject({ fired: true });
  expect(await firings('late')).toEqual(['2026-06-01T14:01:00.000Z']);
});

/**
 * goal_name names a goal as filter_goal does: a defined goal in any case, or a sent event, whether or
 * not an event goal relabels it (an exact label match read 0 for both, and an alert on a sent event
 * fell silent once someone defined a goal for it).
 */
test('a goal alert counts its completions whatever goal relabels the event, and in any case of a goal name', async () => {
  const u = await svc.tenant({ scopes: ['alerts:write', 'goals:write', 'analytics:read'] });
  const buys = [10, 20, 30].map((m) => JSON.stringify({ ts: `2026-06-01T15:${m}:00Z`, name: 'purchase', url: `https://${u.domain}/`, visitor: 'p', user_agent: UA }));
  expect(await svc.admin('events import', { site: u.siteId }, buys.join('\n'))).toMatchObject({ imported: 3 });
  const goal = await svc.api('POST', '/goals', { token: u.token, body: { site_id: u.siteId, name: 'Revsig', kind: 'event', event_name: 'purchase' } });
  expect(goal.status).toBe(201);
  setClock('2026-06-01T15:00:00Z');
  const ids: Record<string, string> = {};
  for (const goal_name of ['purchase', 'revsig', 'Revsig']) {
    const res = await svc.api('POST', `/sites/${u.siteId}/alerts`, { token: u.token, body: { name: goal_name, trigger_type: 'goal', goal_name, threshold: 3 } });
    ids[goal_name] = res.body.data.id;
  }
  setClock('2026-06-01T16:00:00Z');
  const run = await evaluateAlerts(svc.running.ctx);
  for (const id of Object.values(ids)) expect(run.find((r) => r.alert_id === id)).toMatchObject({ value: 3, fired: true });
});

test('a goal alert counts each event once, whichever and however many goals complete it, nominated or not', async () => {
  const u = await svc.tenant({ scopes: ['alerts:write', 'goals:write', 'analytics:read'] });
  const buys = [10, 20, 30].map((m) => JSON.stringify({ ts: `2026-06-02T15:${m}:00Z`, name: 'purchase', url: `https://${u.domain}/`, visitor: 'p', user_agent: UA }));
  expect(await svc.admin('events import', { site: u.siteId }, buys.join('\n'))).toMatchObject({ imported: 3 });
  // Two event goals on one event, and another goal nominated as the revenue signal.
  for (const body of [
    { name: 'Revsig', kind: 'event', event_name: 'purchase' },
    { name: 'Buy', kind: 'event', event_name: 'purchase' },
    { name: 'Signup', kind: 'event', event_name: 'signup', revenue_signal: true },
  ]) expect((await svc.api('POST', '/goals', { token: u.token, body: { site_id: u.siteId, ...body } })).status).toBe(201);
  setClock('2026-06-02T15:00:00Z');
  const ids: Record<string, string> = {};
  for (const goal_name of ['purchase', 'Buy']) {
    const res = await svc.api('POST', `/sites/${u.siteId}/alerts`, { token: u.token, body: { name: goal_name, trigger_type: 'goal', goal_name, threshold: 4 } });
    ids[goal_name] = res.body.data.id;
  }
  setClock('2026-06-02T16:00:00Z');
  const run = await evaluateAlerts(svc.running.ctx);
  for (const id of Object.values(ids)) expect(run.find((r) => r.alert_id === id)).toMatchObject({ value: 3, fired: false });
});

test('evaluations in one process run one at a time: a direct call waits for the scheduled run under way, even one that failed', async () => {
  let running = 0;
  let most = 0;
  const measure: FigureSource = async () => {
    most = Math.max(most, ++running);
    await new Promise((r) => setTimeout(r, 20));
    running--;
    return 0;
  };
  const failing = evaluateAlerts({ ...svc.running.ctx, store: { ...svc.running.ctx.store, query: () => Promise.reject(new Error('engine down')) } });
  const runs = [evaluateAlerts(svc.running.ctx, measure), evaluateAlerts(svc.running.ctx, measure)];
  await expect(failing).rejects.toThrow('engine down');
  expect((await Promise.all(runs))[0].length).toBeGreaterThan(0);
  expect(most).toBe(1);
});
