import { UnrecoverableError } from 'bullmq';
import { createTransport } from 'nodemailer';
import { chToIso } from '../../clickhouse/meta';
import { nowMs } from '../../core/clock';
import type { SmtpConfig } from '../../core/config';
import type { Site } from '../../core/domain';
import { logger } from '../../core/logger';
import { AlertDeliveries, type DeliveryOutcome } from '../../model/alert-deliveries';
import { AlertsRepo, type FiringRow } from '../../model/alerts';
import { alertMessage, type AlertMessage, type FiredValues } from '../../model/alerts-mail';
import type { Repos } from '../../model/repos';
import type { Queues } from '../queues';
import type { Attempt, JobDefinition, WorkerContext } from '../types';

/**
 * E-mail delivery of alert firings (docs/RESOURCES.md, Alerts). The evaluation queues one job per
 * recorded firing and goes on: it never waits on SMTP. The job finds the recipients and sends one
 * mail, retried with backoff while the mail server is down. Its job id is the firing's, so a firing
 * recorded twice (two runs of one minute) is queued, and mailed, once.
 */
export const ALERT_DELIVERY_QUEUE = 'alert-delivery';

export interface DeliveryPayload extends FiredValues {
  firing_id: string;
  alert_id: string;
  site_id: string;
}

/** What queuing a delivery needs: a worker's context, or the service's (tests evaluate with it). */
export type DeliveryContext = Pick<WorkerContext, 'store' | 'repos' | 'config'> &
  ({ enqueue: WorkerContext['enqueue'] } | { queues: Pick<Queues, 'enqueue'> });

/** A prepared mail: its recipients' addresses and what it says. */
type Mail = { to: string[]; message: AlertMessage };

/** A prepared mail, or why there is none to send. */
type Prepared = Mail | { skipped: string };

/** The SMTP client's own waits are minutes; a job holding its worker that long delays every other mail. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/**
 * Without Redis there is no queue to wait in: the process sends itself, in the background, trying
 * again after these pauses (about 12 minutes in all) before giving up.
 */
const DIRECT_RETRY_MS = [30_000, 120_000, 600_000];

const jobId = (firingId: string) => `firing-${firingId}`; // BullMQ refuses ':' in custom ids

/**
 * Owed mails are re-queued from this old: past the direct loop's tries (a process sending without
 * Redis is not raced by a queued copy) and long after a healthy queue has taken the job.
 */
const OWED_AFTER_MS = 15 * 60_000;

/** ...and up to this old: a mail later than that reports news nobody can act on any more. */
const OWED_FOR_MS = 6 * 3_600_000;

/** What a delivery needs of its context: storage (recipients, outcomes) and the SMTP settings. */
type SendContext = Pick<WorkerContext, 'store' | 'repos' | 'config'>;

/**
 * Queue the mail of each recorded firing. Nothing when TALLY_SMTP_URL is unset. When the queue
 * cannot take it (Redis down: evaluation runs on the process's own timer then), the mail is
 * prepared now and sent from this process in the background, with a bounded retry.
 */
export async function queueDeliveries(ctx: DeliveryContext, firings: FiringRow[]): Promise<void> {
  if (firings.length === 0) return;
  // Recorded as off, so setting TALLY_SMTP_URL later does not mail the firings recorded before.
  if (!ctx.config.smtp) return new AlertDeliveries(ctx.store).settle(firings, 'off');
  const enqueue = enqueuer(ctx);
  await Promise.all(firings.map(async (f) => {
    const payload = payloadOf(f);
    try {
      await enqueue(ALERT_DELIVERY_QUEUE, payload, jobId(f.id));
    } catch {
      await deliverDirectly(ctx, payload).catch((err: Error) =>
        logDelivery(payload, 0, 'failed', { err: err.message, direct: true }));
    }
  }));
}

/**
 * Queue again the mails owed for firings recorded between OWED_FOR_MS and OWED_AFTER_MS ago (no
 * outcome recorded). A job still queued or retrying, or finished within the day BullMQ keeps it,
 * has the same id, so queuing it again does nothing; one lost with a Redis that restarted empty is
 * queued anew. Nothing while Redis is down: mails owed then wait for it (a direct send was made when
 * the firing was recorded). Answers how many were handed to the queue.
 */
export async function requeueOwedDeliveries(ctx: DeliveryContext): Promise<number> {
  if (!ctx.config.smtp) return 0;
  const now = nowMs();
  const owed = await new AlertDeliveries(ctx.store).owed(now - OWED_FOR_MS, now - OWED_AFTER_MS);
  const enqueue = enqueuer(ctx);
  let queued = 0;
  for (const f of owed) {
    try {
      await enqueue(ALERT_DELIVERY_QUEUE, payloadOf(f), jobId(f.id));
      queued++;
    } catch {
      break; // the queue is down: every other would fail alike
    }
  }
  return queued;
}

const enqueuer = (ctx: DeliveryContext) => ('enqueue' in ctx ? ctx.enqueue : ctx.queues.enqueue.bind(ctx.queues));

const payloadOf = (f: FiringRow): DeliveryPayload => ({
  firing_id: f.id, alert_id: f.alert_id, site_id: f.site_id, fired_at: chToIso(f.fired_at)!, value: f.value, threshold: f.threshold,
});

async function deliverDirectly(ctx: SendContext, payload: DeliveryPayload): Promise<void> {
  // Prepared now, while storage is surely open: the background below touches only SMTP (and records
  // the outcome, which never throws).
  const mail = await prepareMail(ctx, payload);
  if ('skipped' in mail) return skip(ctx, payload, mail.skipped, { direct: true });
  const max = DIRECT_RETRY_MS.length + 1;
  void (async () => {
    for (let made = 0; made < max; made++) {
      if (made > 0) await new Promise((resolve) => setTimeout(resolve, DIRECT_RETRY_MS[made - 1]).unref());
      try {
        return await sendLogged(ctx, payload, mail, { made, max }, { direct: true });
      } catch (err) {
        if (err instanceof UnrecoverableError) return;
      }
    }
  })();
}

/** The alert, its site and its recipients as they are now (a retry an hour later sees a member who left as gone). */
async function prepareMail(ctx: Pick<WorkerContext, 'store' | 'repos'>, p: DeliveryPayload): Promise<Prepared> {
  const alert = await new AlertsRepo(ctx.store).get(p.site_id, p.alert_id);
  if (!alert) return { skipped: 'the alert was deleted' };
  const site = await ctx.repos.getSite(p.site_id);
  if (!site) return { skipped: 'the site is gone' };
  const to = await recipients(ctx.repos, site, alert.created_by);
  if (to.length === 0) return { skipped: 'nobody to mail' };
  return { to, message: alertMessage(alert, site.domain, p) };
}

/**
 * The alert's creator while they are still a member who reaches the site (an owner every site; an
 * admin or member every site or those their access names); otherwise the organisation's owners. An
 * alert outlives its creator (it belongs to the site), and someone must still hear when it fires;
 * owners see every site. A mail never goes to someone who could not see the figures it carries.
 */
async function recipients(repos: Repos, site: Site, createdBy: string): Promise<string[]> {
  const creator = await repos.membership(site.org_id, createdBy);
  const reaches = creator && (creator.all_sites || creator.site_ids.includes(site.id));
  const ids = reaches
    ? [createdBy]
    : (await repos.owners(site.org_id)).map((m) => m.user_id);
  if (ids.length === 0) return [];
  const users = await repos.users.select('id IN {ids:Array(UUID)}', { ids }, 'ORDER BY email');
  return [...new Set(users.map((u) => u.email))];
}

/**
 * One try of a prepared mail, logged either way: `sent`, or `retrying` / `failed` (the last try, or a
 * refusal the server will repeat, thrown as UnrecoverableError so neither BullMQ nor the direct loop
 * tries again). The queued job and the Redis-down loop share it, so both classify and log alike.
 */
async function sendLogged(ctx: SendContext, payload: DeliveryPayload, mail: Mail, attempt: Attempt, extra: object = {}): Promise<void> {
  const tried = { attempt: attempt.made + 1, ...extra };
  try {
    await sendMail(ctx.config.smtp!, ctx.config.mailFrom, mail.to, mail.message);
  } catch (err) {
    const permanent = isPermanent(err);
    const final = permanent || attempt.made + 1 >= attempt.max;
    logDelivery(payload, mail.to.length, final ? 'failed' : 'retrying', { err: (err as Error).message, ...tried });
    if (final) await settle(ctx, payload, 'failed');
    throw permanent ? new UnrecoverableError((err as Error).message) : err;
  }
  logDelivery(payload, mail.to.length, 'sent', tried);
  await settle(ctx, payload, 'sent');
}

const settle = (ctx: Pick<WorkerContext, 'store'>, p: DeliveryPayload, outcome: DeliveryOutcome) =>
  new AlertDeliveries(ctx.store).settle([{ id: p.firing_id, site_id: p.site_id }], outcome);

/** No mail for this firing, ever: logged with the reason, and recorded so it is not owed. */
async function skip(ctx: Pick<WorkerContext, 'store'>, p: DeliveryPayload, reason: string, extra: object = {}): Promise<void> {
  logDelivery(p, 0, 'skipped', { reason, ...extra });
  await settle(ctx, p, 'skipped');
}

/** One mail on its own connection: a few firings a minute at most, so no pool to keep or close at shutdown. */
async function sendMail(smtp: SmtpConfig, from: string, to: string[], message: AlertMessage): Promise<void> {
  const transport = createTransport({
    host: smtp.host, port: smtp.port, secure: smtp.secure,
    auth: smtp.user !== undefined ? { user: smtp.user, pass: smtp.pass ?? '' } : undefined,
    ...SMTP_TIMEOUTS,
  });
  try {
    await transport.sendMail({ from, to, subject: message.subject, text: message.text });
  } finally {
    transport.close();
  }
}

/**
 * A refusal the server will repeat (5xx: a recipient or sender it does not take) is not retried.
 * A refused login is: it is the operator's setting, and mail queued meanwhile goes once it is fixed.
 */
function isPermanent(err: unknown): boolean {
  const e = err as { responseCode?: number; code?: string };
  return e.code !== 'EAUTH' && typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600;
}

/** One line per delivery attempt: ids, how many recipients and the outcome; never addresses, the text or credentials. */
function logDelivery(p: DeliveryPayload, recipientCount: number, outcome: 'sent' | 'retrying' | 'failed' | 'skipped', extra: object = {}): void {
  const line = { alertId: p.alert_id, firingId: p.firing_id, siteId: p.site_id, recipients: recipientCount, outcome, ...extra };
  if (outcome === 'sent' || outcome === 'skipped') logger.info(line, 'alert delivery');
  else logger.warn(line, 'alert delivery');
}

export const alertDeliveryJob: JobDefinition<DeliveryPayload> = {
  queue: ALERT_DELIVERY_QUEUE,
  // 30 s, 1, 2, 4 ... 128 min: ten tries over about four hours ride out a mail server's restart or
  // maintenance. Finished jobs are kept a day so their ids still turn away a second queuing.
  defaultJobOptions: {
    attempts: 10, backoff: { type: 'exponential', delay: 30_000 },
    removeOnComplete: { age: 86_400, count: 10_000 }, removeOnFail: { age: 7 * 86_400, count: 1000 },
  },
  concurrency: 2,
  async handler(payload, ctx, attempt) {
    // A worker started without TALLY_SMTP_URL (processes should share one setting) cannot send.
    if (!ctx.config.smtp) return skip(ctx, payload, 'TALLY_SMTP_URL is unset in this worker');
    const mail = await prepareMail(ctx, payload);
    if ('skipped' in mail) return skip(ctx, payload, mail.skipped);
    await sendLogged(ctx, payload, mail, attempt);
  },
};
