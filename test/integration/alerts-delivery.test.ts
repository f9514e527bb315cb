import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { setClock } from '../../core/clock';
import { AlertsRepo } from '../../model/alerts';
import { evaluateAlerts, reportFigure } from '../../workers/jobs/alerts';
import { alertDeliveryJob, requeueOwedDeliveries, type DeliveryPayload } from '../../workers/jobs/alert-delivery';
import type { WorkerContext } from '../../workers/types';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { withQueue } from '../support/redis';
import { startSmtpDouble, type ReceivedMail, type SmtpDouble } from '../support/smtp-double';
import { waitFor } from '../support/wait';

/**
 * Alert firings mailed through a real SMTP server (the smtp-server double), queued in real Redis,
 * measured on real chDB: the evaluator is called directly with the clock frozen, as in
 * alerts-evaluation.test.ts, and the service's own worker sends.
 */
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const SMTP_USER = 'tally';
const SMTP_PASS = 'p@ss:w/rd';
const FROM = 'alerts@tally.test';

const line = (t: Tenant, ts: string, visitor: string) =>
  JSON.stringify({ ts, name: 'pageview', url: `https://${t.domain}/`, visitor, user_agent: UA });

/** 10:00-11:00 five visitors, 11:00-12:00 one, 12:00-13:00 six. */
async function importTraffic(svc: TestService, t: Tenant): Promise<void> {
  const lines = [
    ...[1, 2, 3, 4, 5].map((v) => line(t, `2026-06-01T10:${String(5 + v * 5).padStart(2, '0')}:00Z`, `a${v}`)),
    line(t, '2026-06-01T11:30:00Z', 'b1'),
    ...[1, 2, 3, 4, 5, 6].map((v) => line(t, `2026-06-01T12:${String(v * 5).padStart(2, '0')}:00Z`, `c${v}`)),
  ];
  expect(await svc.admin('events import', { site: t.siteId }, lines.join('\n'))).toMatchObject({ imported: lines.length, rejected: 0 });
}

async function createAlert(svc: TestService, t: Tenant, token: string, body: object): Promise<string> {
  const res = await svc.api('POST', `/sites/${t.siteId}/alerts`, { token, body: { window_minutes: 60, ...body } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** Every queued delivery has finished (sent, or failed for good): nothing waiting, running or delayed. */
async function deliveriesSettled(svc: TestService): Promise<void> {
  await withQueue(svc.running.ctx.redis, 'alert-delivery', (q) => waitFor('deliveries to settle', async () => {
    const c = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return Object.values(c).every((n) => n === 0);
  }));
}

/** The recorded outcome of each firing's mail: firing id -> outcome. */
async function outcomes(svc: TestService): Promise<Map<string, string>> {
  const rows = await svc.running.ctx.store.query<{ firing_id: string; outcome: string }>(
    `SELECT firing_id, outcome FROM ${svc.running.ctx.store.table('alert_deliveries')} FINAL`);
  return new Map(rows.map((r) => [r.firing_id, r.outcome]));
}

const deliveryJobs = (svc: TestService) => withQueue(svc.running.ctx.redis, 'alert-delivery', (q: Queue) => q.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active']));

describe('with TALLY_SMTP_URL', () => {
  let smtp: SmtpDouble;
  let svc: TestService;
  let t: Tenant;
  const ids: Record<string, string> = {};
  const emails: Record<string, string> = {};
  const mailsFor = (subject: string): ReceivedMail[] => smtp.mails.filter((m) => m.subject === subject);

  const evaluateAt = async (iso: string) => {
    setClock(iso);
    const run = await evaluateAlerts(svc.running.ctx);
    return new Map(run.map((r) => [Object.keys(ids).find((k) => ids[k] === r.alert_id)!, r]));
  };

  beforeAll(async () => {
    setClock('2026-06-01T09:00:00Z');
    smtp = await startSmtpDouble({ user: SMTP_USER, pass: SMTP_PASS, refuse: (address) => address.startsWith('refused-') });
    svc = await startTestService({
      TALLY_SMTP_URL: `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASS)}@127.0.0.1:${smtp.port}`,
      TALLY_MAIL_FROM: `Tally Alerts <${FROM}>`,
    });
    t = await svc.tenant({ scopes: ['alerts:write', 'analytics:read'], sites: 2 });
    await importTraffic(svc, t);
    const member = async (name: string, role = 'member') => {
      const u = await svc.admin<{ id: string; email: string }>('user create', { org: t.orgId, email: `${name}-${t.orgId.slice(0, 8)}@example.com`, role });
      emails[name] = u.email;
      return u.id;
    };
    const teamKey = await t.key({ scopes: ['team:write'] });
    const team = (await svc.api('GET', '/team', { token: teamKey.token })).body.data as { user_id: string; email: string }[];
    emails.owner = team.find((m) => m.user_id === t.userId)!.email;
    const creator = await member('creator');
    const leaver = await member('leaver');
    const confined = await member('confined', 'admin');
    await member('owner2', 'owner');
    const refused = await member('refused');
    const tokenOf = async (userId: string) => (await t.key({ scopes: ['alerts:write', 'analytics:read'], userId })).token;

    ids.spike = await createAlert(svc, t, await tokenOf(creator), {
      name: 'spike', trigger_type: 'visitors_spike', threshold: 4, subject: 'Traffic spike on the shop', body: 'Check the campaign.\nNothing to do if it was planned.',
    });
    ids.orphan = await createAlert(svc, t, await tokenOf(leaver), { name: 'orphan', trigger_type: 'visitors_spike', threshold: 4, subject: 'Orphan spike' });
    ids.confined = await createAlert(svc, t, await tokenOf(confined), { name: 'confined', trigger_type: 'visitors_spike', threshold: 4, subject: 'Confined spike' });
    ids.refused = await createAlert(svc, t, await tokenOf(refused), { name: 'refused', trigger_type: 'visitors_spike', threshold: 4, subject: 'Refused spike' });
    ids.edited = await createAlert(svc, t, t.token, { name: 'edited', trigger_type: 'visitors_spike', threshold: 1000, subject: 'Edited mid-run' });
    ids.drop = await createAlert(svc, t, t.token, { name: 'drop', trigger_type: 'traffic_drop', threshold_mode: 'percent_change', threshold: 50, subject: 'Traffic fell' });
    // The leaver leaves; the admin is confined to the other site: neither may see this site's figures now.
    await svc.admin('user remove', { org: t.orgId, user: leaver });
    const patch = await svc.api('PATCH', `/team/members/${confined}/sites`, { token: teamKey.token, body: { site_ids: [t.siteIds[1]] } });
    expect(patch.status).toBe(200);
  });
  afterAll(async () => {
    setClock(null);
    await svc.stop();
    await smtp.stop();
  });

  test('a firing sends one mail to the alert\'s creator: the alert\'s subject, its body, then what fired', async () => {
    const run = await evaluateAt('2026-06-01T11:00:00Z');
    expect(run.get('spike')).toMatchObject({ fired: true, value: 5 });
    await waitFor('the spike mail', () => mailsFor('Traffic spike on the shop').length > 0);
    await deliveriesSettled(svc);
    const mails = mailsFor('Traffic spike on the shop');
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail).toMatchObject({ from: FROM, to: [emails.creator], user: SMTP_USER });
    expect(mail.headers.from).toBe(`Tally Alerts <${FROM}>`);
    expect(mail.headers.to).toBe(emails.creator);
    expect(mail.text).toBe([
      'Check the campaign.',
      'Nothing to do if it was planned.',
      '',
      '---',
      `Alert "spike" fired for ${t.domain}.`,
      '',
      `Site: ${t.domain}`,
      'Alert: spike',
      'Trigger: visitors_spike',
      'Condition: visitors over the last 60 minutes at or above 4 (absolute)',
      'Measured: 5',
      'Fired at: 2026-06-01T11:00:00.000Z (UTC)',
      '',
    ].join('\n'));
    expect(mail.text).not.toContain(SMTP_PASS);
  });

  test('a creator who left, or no longer reaches the site, is replaced by the organisation\'s owners', async () => {
    const owners = [emails.owner, emails.owner2].sort();
    for (const subject of ['Orphan spike', 'Confined spike']) {
      const mails = mailsFor(subject);
      expect(mails).toHaveLength(1);
      expect([...mails[0].to].sort()).toEqual(owners);
    }
    expect(smtp.mails.flatMap((m) => m.to)).not.toContain(emails.leaver);
    expect(smtp.mails.flatMap((m) => m.to)).not.toContain(emails.confined);
  });

  test('a recipient the mail server refuses (5xx) is not retried: the job fails on its first try', async () => {
    await deliveriesSettled(svc);
    // Every job of the alert is in the failed list: none waits for a retry.
    const failed = (await withQueue(svc.running.ctx.redis, 'alert-delivery', (q) => q.getJobs(['failed']))).filter((j) => j.data.alert_id === ids.refused);
    expect((await deliveryJobs(svc)).filter((j) => j.data.alert_id === ids.refused).map((j) => j.id)).toEqual(failed.map((j) => j.id));
    expect(failed).toHaveLength(1);
    expect(failed[0].attemptsMade).toBe(1);
    expect(failed[0].failedReason).toMatch(/550/);
    expect(mailsFor('Refused spike')).toEqual([]);
  });

  test('the same minute evaluated again, by a process that read the state before the firing was saved, mails once', async () => {
    // The state as that process read it: not firing. It records the same firing (id = alert + minute).
    await new AlertsRepo(svc.running.ctx.store).clearState(ids.spike);
    expect((await evaluateAt('2026-06-01T11:00:30Z')).get('spike')).toMatchObject({ fired: true });
    await deliveriesSettled(svc);
    const firings = (await svc.api('GET', `/sites/${t.siteId}/alerts/${ids.spike}/firings`, { token: t.token })).body.data;
    expect(firings.map((f: { fired_at: string }) => f.fired_at)).toEqual(['2026-06-01T11:00:00.000Z']);
    // The firing id is the job id: queued once, mailed once.
    expect(mailsFor('Traffic spike on the shop')).toHaveLength(1);
    const jobs = (await deliveryJobs(svc)).filter((j) => j.data.alert_id === ids.spike);
    expect(jobs.map((j) => j.id)).toEqual([`firing-${firings[0].id}`]);
  });

  test('no mail while the condition keeps holding', async () => {
    expect((await evaluateAt('2026-06-01T11:00:40Z')).get('spike')).toMatchObject({ holds: true, fired: false });
    expect((await evaluateAt('2026-06-01T11:01:00Z')).get('spike')).toMatchObject({ holds: true, fired: false });
    await deliveriesSettled(svc);
    expect(mailsFor('Traffic spike on the shop')).toHaveLength(1);
    expect(smtp.mails).toHaveLength(3);
  });

  test('a firing the run does not record (its alert switched off while measured) is not mailed', async () => {
    setClock('2026-06-01T11:02:00Z');
    const run = await evaluateAlerts(svc.running.ctx, async (store, site, days, alert, from, to) => {
      if (alert.id !== ids.edited) return reportFigure(store, site, days, alert, from, to);
      await svc.api('PATCH', `/sites/${t.siteId}/alerts/${ids.edited}`, { token: t.token, body: { enabled: false } });
      return 5000;
    });
    expect(run.find((r) => r.alert_id === ids.edited)).toMatchObject({ fired: true });
    expect((await svc.api('GET', `/sites/${t.siteId}/alerts/${ids.edited}/firings`, { token: t.token })).body.data).toEqual([]);
    await deliveriesSettled(svc);
    expect((await deliveryJobs(svc)).filter((j) => j.data.alert_id === ids.edited)).toEqual([]);
    expect(mailsFor('Edited mid-run')).toEqual([]);
  });

  test('a mail server down at the firing: retried with backoff, delivered once it is back, exactly once', async () => {
    await smtp.stop();
    const run = await evaluateAt('2026-06-01T12:00:00Z');
    expect(run.get('drop')).toMatchObject({ fired: true });
    const firing = (await svc.api('GET', `/sites/${t.siteId}/alerts/${ids.drop}/firings`, { token: t.token })).body.data[0];
    await withQueue(svc.running.ctx.redis, 'alert-delivery', async (q) => {
      const id = `firing-${firing.id}`;
      // The first attempt fails (connection refused) and waits its backoff (30 s): not a lost mail.
      await waitFor('a failed first attempt', async () => (await q.getJob(id))?.attemptsMade === 1 && (await q.getJobState(id)) === 'delayed');
      expect(mailsFor('Traffic fell')).toHaveLength(0);
      await smtp.start();
      // Not waiting out the 30 s: the retry is brought forward, as its time had come.
      await (await q.getJob(id))!.promote();
      await waitFor('the retried delivery', async () => (await q.getJobState(id)) === 'completed');
      expect((await q.getJob(id))!.attemptsMade).toBe(2);
    });
    await deliveriesSettled(svc);
    const mails = mailsFor('Traffic fell');
    expect(mails).toHaveLength(1);
    expect(mails[0].to).toEqual([emails.owner]);
    expect(mails[0].text).toContain('Condition: a fall of at least 50 % in visitors over the last 60 minutes, against the 60 minutes before (percent_change)\n');
    expect(mails[0].text).toContain('Measured: a fall of 80 %\n');
    expect(mails[0].text).toMatch(/^Alert "drop" fired for /);
  });

  test('each firing\'s outcome is recorded: sent, or failed when refused for good', async () => {
    const recorded = await outcomes(svc);
    const firingOf = async (name: string) =>
      (await svc.api('GET', `/sites/${t.siteId}/alerts/${ids[name]}/firings`, { token: t.token })).body.data[0].id as string;
    for (const name of ['spike', 'orphan', 'confined', 'drop']) expect([name, recorded.get(await firingOf(name))]).toEqual([name, 'sent']);
    expect(recorded.get(await firingOf('refused'))).toBe('failed');
  });

  test('mail a Redis lost (restarted empty) before sending it is queued again by a later run and sent once; mail already sent is not', async () => {
    // 13:00: the spike alerts, re-armed at 12:00, fire again while the mail server is down.
    await smtp.stop();
    const run = await evaluateAt('2026-06-01T13:00:00Z');
    expect(run.get('spike')).toMatchObject({ fired: true });
    await withQueue(svc.running.ctx.redis, 'alert-delivery', async (q) => {
      await waitFor('every 13:00 delivery tried once', async () => {
        const jobs = (await q.getJobs(['delayed', 'waiting', 'active', 'failed'])).filter((j) => j.data.fired_at === '2026-06-01T13:00:00.000Z');
        return jobs.length === 4 && jobs.every((j) => j.attemptsMade >= 1);
      });
      // Redis comes back empty: every job gone, the 11:00 and 12:00 ones (sent) with them.
      for (const job of await q.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active'])) await job.remove();
    });
    await smtp.start();
    // Not yet: a mail is owed from a quarter of an hour after its firing.
    await evaluateAt('2026-06-01T13:10:00Z');
    expect(await deliveryJobs(svc)).toEqual([]);
    await evaluateAt('2026-06-01T13:16:00Z');
    await waitFor('the re-queued spike mail', () => mailsFor('Traffic spike on the shop').length === 2);
    await deliveriesSettled(svc);
    const requeued = await deliveryJobs(svc);
    expect(requeued.map((j) => j.data.fired_at)).toEqual(Array(4).fill('2026-06-01T13:00:00.000Z'));
    expect(mailsFor('Traffic spike on the shop')[1].text).toContain('Fired at: 2026-06-01T13:00:00.000Z (UTC)');
    for (const subject of ['Orphan spike', 'Confined spike']) expect(mailsFor(subject)).toHaveLength(2);
    expect(mailsFor('Traffic fell')).toHaveLength(1);
    expect(mailsFor('Refused spike')).toEqual([]);
    // Every firing has its outcome now: the next run queues nothing, and nothing is mailed twice.
    const mailed = smtp.mails.length;
    expect(await requeueOwedDeliveries(svc.running.ctx)).toBe(0);
    await evaluateAt('2026-06-01T13:17:00Z');
    await deliveriesSettled(svc);
    expect(smtp.mails).toHaveLength(mailed);
  });

  test('a delivery whose alert was deleted meanwhile sends nothing and is recorded skipped, so it is not owed', async () => {
    const payload: DeliveryPayload = {
      firing_id: randomUUID(), alert_id: randomUUID(), site_id: t.siteId, fired_at: '2026-06-01T13:00:00.000Z', value: 5, threshold: 4,
    };
    const mailed = smtp.mails.length;
    await alertDeliveryJob.handler(payload, svc.running.ctx as unknown as WorkerContext, { made: 0, max: 10 });
    expect(smtp.mails).toHaveLength(mailed);
    expect((await outcomes(svc)).get(payload.firing_id)).toBe('skipped');
  });
});

describe('without TALLY_SMTP_URL', () => {
  let svc: TestService;
  afterAll(async () => {
    setClock(null);
    await svc?.stop();
  });

  test('a firing is recorded and nothing is queued for delivery', async () => {
    setClock('2026-06-01T09:00:00Z');
    svc = await startTestService();
    const t = await svc.tenant({ scopes: ['alerts:write', 'analytics:read'] });
    await importTraffic(svc, t);
    const id = await createAlert(svc, t, t.token, { name: 'spike', trigger_type: 'visitors_spike', threshold: 4 });
    setClock('2026-06-01T11:00:00Z');
    expect((await evaluateAlerts(svc.running.ctx)).find((r) => r.alert_id === id)).toMatchObject({ fired: true });
    expect((await svc.api('GET', `/sites/${t.siteId}/alerts/${id}/firings`, { token: t.token })).body.data).toHaveLength(1);
    expect(await deliveryJobs(svc)).toEqual([]);
    // Recorded as never to be mailed: an SMTP server set up later does not mail what fired before.
    expect([...(await outcomes(svc)).values()]).toEqual(['off']);
    setClock('2026-06-01T11:20:00Z');
    const withSmtp = { ...svc.running.ctx, config: { ...svc.running.ctx.config, smtp: { host: '127.0.0.1', port: 1, secure: false } } };
    expect(await requeueOwedDeliveries(withSmtp)).toBe(0);
  });
});

describe('with TALLY_SMTP_URL and Redis down', () => {
  let smtp: SmtpDouble;
  let svc: TestService;
  afterAll(async () => {
    setClock(null);
    await svc?.stop();
    await smtp?.stop();
  });

  test('the evaluating process sends the mail itself', async () => {
    smtp = await startSmtpDouble();
    setClock('2026-06-01T09:00:00Z');
    svc = await startTestService({ REDIS_URL: 'redis://127.0.0.1:1', TALLY_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
    const t = await svc.tenant({ scopes: ['alerts:write', 'analytics:read'] });
    await importTraffic(svc, t);
    const id = await createAlert(svc, t, t.token, { name: 'spike', trigger_type: 'visitors_spike', threshold: 4 });
    setClock('2026-06-01T11:00:00Z');
    expect((await evaluateAlerts(svc.running.ctx)).find((r) => r.alert_id === id)).toMatchObject({ fired: true });
    await waitFor('the direct mail', () => smtp.mails.length > 0);
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]).toMatchObject({ from: 'tally@localhost', subject: 'spike' });
    expect(smtp.mails[0].text).toMatch(/^Alert "spike" fired for .*\n\nSite: .*\nAlert: spike\n/);
    await waitFor('the outcome recorded', async () => [...(await outcomes(svc)).values()].join() === 'sent');
  });
});
