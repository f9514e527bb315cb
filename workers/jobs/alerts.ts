import { chToMs, isoToCh } from '../../clickhouse/meta';
import { nowMs } from '../../core/clock';
import type { Site } from '../../core/domain';
import { logger } from '../../core/logger';
import { AlertsRepo, type AlertRow, type AlertState, type FiringRow } from '../../model/alerts';
import { TRIGGERS, comparedFigure, conditionHolds, nextEdge, type Measurement } from '../../model/alerts-rules';
import type { Store } from '../../clickhouse/store';
import { runReport } from '../../query';
import { serially } from '../../core/serially';
import type { JobDefinition, WorkerContext } from '../types';
import { queueDeliveries, requeueOwedDeliveries, type DeliveryContext } from './alert-delivery';

/**
 * Alert evaluation, run every minute by a BullMQ job scheduler. Each enabled alert's figure is
 * measured over the last `window_minutes` (and the window before, for percent_change), its condition
 * checked, and the alert fires only on the edge into the condition: once per crossing, not again
 * while it holds, re-armed when it stops holding.
 */
export type FigureSource = (store: Store, site: Site, retentionDays: number, alert: AlertRow, fromMs: number, toMs: number) => Promise<number>;

/** An alert's figure over [from, to), from the query helper's reports (see TRIGGERS for which). */
export const reportFigure: FigureSource = async (store, site, retentionDays, alert, fromMs, toMs) => {
  const window = { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
  const figure = TRIGGERS[alert.trigger_type].figure;
  // A goal alert counts its goal's completions as filter_goal names them (a defined goal in any case,
  // a sent event by its name, whichever goals relabel it), each event once, nominated or not. (Summing
  // the goal breakdown's rows counted an event once per event goal naming it: 3 purchases read 6.)
  const params = figure === 'goals' ? { ...window, filter_goal: alert.goal_name ?? '' } : window;
  const overview = (await runReport(store, site, retentionDays, 'overview', params, { countEveryGoal: true })).data as Record<string, number>;
  return Number(overview[figure] ?? 0);
};

export interface Evaluation {
  alert_id: string;
  value: number;
  holds: boolean;
  fired: boolean;
}

const MINUTE = 60_000;

/** A worker's context, or the service's (tests evaluate with it): storage, and where firings' mail is queued. */
export type EvaluationContext = DeliveryContext;

export function evaluateAlerts(ctx: EvaluationContext, measure: FigureSource = reportFigure): Promise<Evaluation[]> {
  // One evaluation at a time per process (per database): the scheduled job and a direct call never interleave.
  return serially(`alerts:${ctx.store.database}`, () => evaluateAll(ctx, measure));
}

async function evaluateAll(ctx: EvaluationContext, measure: FigureSource): Promise<Evaluation[]> {
  // Minute-aligned, so a repeated run in the same minute measures the same window and records the
  // same firing id.
  const at = Math.floor(nowMs() / MINUTE) * MINUTE;
  const repo = new AlertsRepo(ctx.store);
  // An alert made after the minute boundary is first measured at the next one: its first window
  // would otherwise end before it existed (and its firing be dated before its creation).
  const alerts = (await repo.enabled()).filter((a) => chToMs(a.created_at) <= at);
  const states = await repo.states(alerts.map((a) => a.id));
  const updatedAt = new Map(alerts.map((a) => [a.id, a.updated_at]));
  const sites = new Map<string, { site: Site; retentionDays: number } | null>();
  const results: Evaluation[] = [];
  const nextStates: AlertState[] = [];
  const firings: Omit<FiringRow, 'id'>[] = [];
  for (const alert of alerts) {
    try {
      const owner = await siteOf(ctx, sites, alert.site_id);
      if (!owner) continue;
      const m = await measureAlert(ctx.store, alert, owner, at, measure);
      const state = states.get(alert.id);
      const holds = conditionHolds(alert, m);
      const edge = nextEdge(!!state?.firing, holds);
      const atCh = isoToCh(new Date(at));
      nextStates.push({
        alert_id: alert.id, firing: edge.firing ? 1 : 0, last_value: m.current, last_evaluated_at: atCh,
        last_fired_at: edge.fire ? atCh : state?.last_fired_at ?? null,
      });
      if (edge.fire) {
        // The value compared with the threshold, so the two read together (a percent_change firing
        // recorded the raw figure, 4 beside a threshold of 100 %). A firing's condition holds, so it has one.
        const value = Math.round(comparedFigure(alert, m)! * 100) / 100;
        firings.push({ alert_id: alert.id, site_id: alert.site_id, fired_at: atCh, value, threshold: alert.threshold });
      }
      results.push({ alert_id: alert.id, value: m.current, holds, fired: edge.fire });
    } catch (err) {
      logger.warn({ alertId: alert.id, err: (err as Error).message }, 'alert evaluation failed');
    }
  }
  // An alert edited or switched off while the run measured it keeps what the edit left (a cleared
  // edge, a new condition): the run's verdict was about the alert as it was. (An edit landing between
  // this second read and the save below is still overwritten: a window of milliseconds, not the
  // measuring's seconds; closing it would take each alert's turn for the save.)
  // `results` keep each verdict; only the firings recorded are logged and mailed.
  const unchanged = new Set((await repo.enabled()).filter((a) => a.updated_at === updatedAt.get(a.id)).map((a) => a.id));
  const recorded = await repo.recordFirings(firings.filter((f) => unchanged.has(f.alert_id)));
  await repo.saveStates(nextStates.filter((s) => unchanged.has(s.alert_id)));
  const subjects = new Map(alerts.map((a) => [a.id, a.subject]));
  for (const f of recorded) logger.info({ alertId: f.alert_id, siteId: f.site_id, firingId: f.id, subject: subjects.get(f.alert_id), value: f.value }, 'alert fired');
  // After the state is saved: a mail never goes for a firing the next run would record again.
  await queueDeliveries(ctx, recorded);
  // And the mails still owed for earlier firings (a queue that lost them): a minute's check is cheap
  // (recent firings, no outcome yet), and a lost mail then goes within a quarter of an hour.
  await requeueOwedDeliveries(ctx).catch((err: Error) => logger.warn({ err: err.message }, 'owed alert mails not re-queued'));
  return results;
}

async function siteOf(ctx: Pick<WorkerContext, 'store' | 'repos'>, cache: Map<string, { site: Site; retentionDays: number } | null>, siteId: string) {
  if (!cache.has(siteId)) {
    const site = await ctx.repos.getSite(siteId);
    const org = site && (await ctx.repos.getOrg(site.org_id));
    cache.set(siteId, site && org ? { site, retentionDays: org.retention_days } : null);
  }
  return cache.get(siteId) ?? null;
}

async function measureAlert(store: Store, alert: AlertRow, owner: { site: Site; retentionDays: number }, at: number, measure: FigureSource): Promise<Measurement> {
  const w = alert.window_minutes * MINUTE;
  const current = await measure(store, owner.site, owner.retentionDays, alert, at - w, at);
  if (alert.threshold_mode !== 'percent_change') return { current };
  return { current, previous: await measure(store, owner.site, owner.retentionDays, alert, at - 2 * w, at - w) };
}

export const alertsJob: JobDefinition<Record<string, never>> = {
  queue: 'alerts',
  // A missed minute is not retried: the next run measures the current window anyway.
  defaultJobOptions: { attempts: 1, removeOnComplete: 100, removeOnFail: 100 },
  concurrency: 1,
  repeatEveryMs: MINUTE,
  // Reports need no queue, and firings are keyed by alert and minute: evaluated while Redis is down too.
  runsWithoutRedis: true,
  handler: (_payload, ctx) => evaluateAlerts(ctx),
};
