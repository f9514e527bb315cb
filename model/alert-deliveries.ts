import { isoToCh, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { logger } from '../core/logger';
import type { FiringRow } from './alerts';

/**
 * How each firing's mail ended (alert_deliveries). A firing with no outcome still has a mail owed:
 * the alerts run re-queues it (workers/jobs/alert-delivery.ts), so a mail queued in a Redis that
 * restarted empty, or a process that died while retrying it, is still sent.
 */
export type DeliveryOutcome = 'sent' | 'failed' | 'skipped' | 'off';

export class AlertDeliveries {
  constructor(private readonly store: Store) {}

  /**
   * Records outcomes. Never throws: the mail has gone (or never will) whatever storage says, and a
   * thrown error would have the queue try, and mail, again. An outcome not written leaves the firing
   * owed: the reconciler's queuing then finds the finished job's id and does nothing while BullMQ keeps
   * it (a day), so at worst one mail goes twice.
   */
  async settle(firings: readonly Pick<FiringRow, 'id' | 'site_id'>[], outcome: DeliveryOutcome): Promise<void> {
    if (firings.length === 0) return;
    const at = nowCh();
    try {
      await this.store.insert('alert_deliveries', firings.map((f) => ({ firing_id: f.id, site_id: f.site_id, outcome, at })));
    } catch (err) {
      logger.warn({ firingIds: firings.map((f) => f.id), outcome, err: (err as Error).message }, 'alert delivery outcome not recorded');
    }
  }

  /** Firings recorded in [fromMs, toMs) whose mail has no outcome yet, oldest first. */
  owed(fromMs: number, toMs: number): Promise<FiringRow[]> {
    const from = isoToCh(new Date(fromMs));
    return this.store.query<FiringRow>(
      `SELECT id, alert_id, site_id, fired_at, value, threshold FROM ${this.store.table('alert_firings')} FINAL
       WHERE fired_at >= {from:DateTime64(3, 'UTC')} AND fired_at < {to:DateTime64(3, 'UTC')}
         AND (site_id, id) NOT IN (
           SELECT site_id, firing_id FROM ${this.store.table('alert_deliveries')} WHERE at >= {from:DateTime64(3, 'UTC')})
       ORDER BY fired_at, id`,
      { from, to: isoToCh(new Date(toMs)) },
    );
  }
}
