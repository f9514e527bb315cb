import { setClock } from '../../core/clock';
import { evaluateAlerts } from '../../workers/jobs/alerts';
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
  t = await svc.tenant({ scopes: ['alerts:write'] });
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
  const key = await t.key({ scopes: ['alerts:write'], userId: member.id });
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
});
