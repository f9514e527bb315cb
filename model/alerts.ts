import { createHash } from 'node:crypto';
import { MetaTable, chToIso, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { newId, nextVersion } from '../core/ids';
import type { ThresholdMode, TriggerType } from './alerts-rules';
import { fetchSize } from '../core/paging';

/**
 * Alerts belong to their site: `created_by` is a record of who made one, not an owner, so an alert
 * outlives its creator. The worker's evaluation state lives apart (alert_state), so an API edit and
 * an evaluation never overwrite each other's columns.
 */
export interface AlertRow {
  id: string; site_id: string; name: string; enabled: number; trigger_type: TriggerType; goal_name: string | null;
  threshold_mode: ThresholdMode; threshold: number; window_minutes: number; subject: string; body: string | null;
  created_by: string; created_at: string; updated_at: string;
}

export interface AlertState {
  alert_id: string; firing: number; last_value: number; last_evaluated_at: string; last_fired_at: string | null;
}

export interface FiringRow { id: string; alert_id: string; site_id: string; fired_at: string; value: number; threshold: number }

export type AlertInput = Omit<AlertRow, 'id' | 'site_id' | 'created_by' | 'created_at' | 'updated_at' | 'enabled'> & { enabled: boolean };

/** What an alert watches: changing any of them re-arms it. */
const WATCHED = ['trigger_type', 'goal_name', 'threshold_mode', 'threshold', 'window_minutes'] as const satisfies readonly (keyof AlertRow)[];

const ALERT_COLUMNS: (keyof AlertRow & string)[] = [
  'id', 'site_id', 'name', 'enabled', 'trigger_type', 'goal_name', 'threshold_mode', 'threshold', 'window_minutes',
  'subject', 'body', 'created_by', 'created_at', 'updated_at',
];

export class AlertsRepo {
  readonly table: MetaTable<AlertRow>;

  constructor(private readonly store: Store) {
    this.table = new MetaTable(store, 'alerts', ALERT_COLUMNS);
  }

  /**
   * A new alert, unless the site already has `cap`: counted and written in the site's turn, so
   * concurrent creations cannot pass the cap together. undefined when the site is full.
   */
  create(siteId: string, input: AlertInput, createdBy: string, cap: number): Promise<AlertRow | undefined> {
    return this.table.exclusive(`site:${siteId}`, async () => {
      // The API caps alerts per site: every alert of every site is evaluated each minute.
      if ((await this.table.count('site_id = {s:UUID}', { s: siteId })) >= cap) return undefined;
      const at = nowCh();
      return this.table.put({
        ...input, enabled: input.enabled ? 1 : 0, id: newId(), site_id: siteId, created_by: createdBy, created_at: at, updated_at: at,
      });
    });
  }

  get(siteId: string, id: string): Promise<AlertRow | undefined> {
    return this.table.ofSite(siteId, id);
  }

  list(siteId: string, page: { limit: number; offset: number }): Promise<AlertRow[]> {
    return this.table.select('site_id = {s:UUID}', { s: siteId, lim: fetchSize(page), off: page.offset },
      'ORDER BY created_at, id LIMIT {lim:UInt32} OFFSET {off:UInt64}');
  }

  /** Every enabled alert of every active site: what the worker evaluates each minute. */
  enabled(): Promise<AlertRow[]> {
    return this.table.select(
      `enabled = 1 AND site_id IN (SELECT id FROM ${this.store.table('sites')} FINAL WHERE is_deleted = 0 AND active = 1)`,
      {}, 'ORDER BY site_id, id',
    );
  }

  /**
   * The alert as `change` makes it from the current row (which keeps its id, site, creator and
   * creation time); undefined when the site has no such alert. Switched off, or changed in what it
   * watches (trigger, goal, threshold, mode, window), it forgets its edge: it fires on the next
   * evaluation that finds its condition, as a new alert does (an edited alert that was firing never
   * fired for its new condition).
   */
  update(siteId: string, id: string, change: (row: AlertRow) => AlertRow): Promise<AlertRow | undefined> {
    return this.table.editOfSite(siteId, id, async (row) => {
      const next = change(row);
      const saved = await this.table.put({
        ...next, id: row.id, site_id: row.site_id, created_by: row.created_by, created_at: row.created_at, updated_at: nowCh(),
      });
      if (!saved.enabled || WATCHED.some((k) => saved[k] !== row[k])) await this.clearState(saved.id);
      return saved;
    });
  }

  /** true, or undefined when the site has no such alert. */
  remove(siteId: string, id: string): Promise<true | undefined> {
    return this.table.removeOfSite(siteId, id);
  }

  async states(alertIds: string[]): Promise<Map<string, AlertState>> {
    if (alertIds.length === 0) return new Map();
    const rows = await this.store.query<AlertState>(
      `SELECT alert_id, firing, last_value, last_evaluated_at, last_fired_at
       FROM ${this.store.table('alert_state')} FINAL WHERE alert_id IN {ids:Array(UUID)}`,
      { ids: alertIds },
    );
    return new Map(rows.map((r) => [r.alert_id, r]));
  }

  async saveStates(states: AlertState[]): Promise<void> {
    await this.store.insert('alert_state', states.map((s) => ({ ...s, version: nextVersion() })));
  }

  /** Forget the edge (keep last_fired_at): the next evaluation that finds the condition fires. */
  async clearState(alertId: string): Promise<void> {
    const state = (await this.states([alertId])).get(alertId);
    if (state?.firing) await this.saveStates([{ ...state, firing: 0 }]);
  }

  /**
   * Firing ids are derived from the alert and the minute, so a repeated evaluation records one firing
   * (and queues one delivery: its job id is the firing's). Answers the rows written, ids included.
   */
  async recordFirings(firings: Omit<FiringRow, 'id'>[]): Promise<FiringRow[]> {
    const rows = firings.map((f) => ({ ...f, id: firingId(f.alert_id, f.fired_at) }));
    await this.store.insert('alert_firings', rows);
    return rows;
  }

  firings(siteId: string, alertId: string, page: { limit: number; offset: number }): Promise<FiringRow[]> {
    return this.store.query<FiringRow>(
      `SELECT id, alert_id, site_id, fired_at, value, threshold FROM ${this.store.table('alert_firings')} FINAL
       WHERE site_id = {s:UUID} AND alert_id = {a:UUID} ORDER BY fired_at DESC, id DESC LIMIT {lim:UInt32} OFFSET {off:UInt64}`,
      { s: siteId, a: alertId, lim: fetchSize(page), off: page.offset },
    );
  }
}

function firingId(alertId: string, firedAt: string): string {
  const h = createHash('sha256').update(`${alertId}|${firedAt.slice(0, 16)}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Exactly the spec's Alert fields; `window_minutes` is accepted in bodies but is not one of them. */
export function alertOut(r: AlertRow, state?: AlertState) {
  return {
    id: r.id, name: r.name, enabled: !!r.enabled, trigger_type: r.trigger_type, goal_name: r.goal_name,
    threshold_mode: r.threshold_mode, threshold: r.threshold, subject: r.subject,
    body: r.body, created_by: r.created_by, created_at: chToIso(r.created_at)!, updated_at: chToIso(r.updated_at)!,
    last_fired_at: chToIso(state?.last_fired_at),
  };
}

export const firingOut = (f: FiringRow) => ({
  id: f.id, alert_id: f.alert_id, fired_at: chToIso(f.fired_at)!, value: f.value, threshold: f.threshold,
});
