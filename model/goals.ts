import { MetaTable, chToIso, isoToCh, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { newId } from '../core/ids';
import { conflict } from '../core/errors';

/**
 * Goals: a sent goal is a custom event (any name but pageview, exit_link, file_download); a goal
 * defined here either names such an event (`event`) or a page rule (`page`, a path glob evaluated at
 * read time, so adding one changes past windows). Goals nominated with `revenue_signal` are the ones
 * reports count; when none is nominated every goal counts.
 */
export type GoalKind = 'event' | 'page';

/** Event names the tracker itself sends; every other name is a sent goal. */
export const BUILTIN_EVENTS: readonly string[] = ['pageview', 'exit_link', 'file_download'];

export interface GoalRow {
  id: string;
  site_id: string;
  name: string;
  kind: GoalKind;
  event_name: string;
  path_pattern: string;
  revenue_signal: number;
  created_at: string;
  updated_at: string;
}

export interface Goal {
  id: string;
  site_id: string;
  name: string;
  kind: GoalKind;
  event_name: string | null;
  path_pattern: string | null;
  revenue_signal: boolean;
  created_at: string;
  updated_at: string;
}

export interface NewGoal {
  site_id: string;
  name: string;
  kind: GoalKind;
  event_name?: string;
  path_pattern?: string;
  revenue_signal?: boolean;
}

export const goalFromRow = (r: GoalRow): Goal => ({
  id: r.id, site_id: r.site_id, name: r.name, kind: r.kind,
  event_name: r.kind === 'event' ? r.event_name : null,
  path_pattern: r.kind === 'page' ? r.path_pattern : null,
  revenue_signal: !!r.revenue_signal, created_at: chToIso(r.created_at)!, updated_at: chToIso(r.updated_at)!,
});

const COLUMNS: (keyof GoalRow & string)[] = [
  'id', 'site_id', 'name', 'kind', 'event_name', 'path_pattern', 'revenue_signal', 'created_at', 'updated_at',
];

export class GoalsRepo {
  private readonly table: MetaTable<GoalRow>;

  constructor(store: Store) {
    this.table = new MetaTable(store, 'goals', COLUMNS);
  }

  async list(siteId: string): Promise<Goal[]> {
    const rows = await this.table.select('site_id = {s:UUID}', { s: siteId }, 'ORDER BY created_at, name, id');
    return rows.map(goalFromRow);
  }

  async get(siteId: string, id: string): Promise<Goal | undefined> {
    const row = await this.table.one('site_id = {s:UUID} AND id = {id:UUID}', { s: siteId, id });
    return row && goalFromRow(row);
  }

  /**
   * A goal whose name (case-insensitive) the site has no other goal of: funnels, alerts and the goal
   * filter find goals by name. Checked and written in the name's turn, so concurrent creations of
   * one name give one goal and 409s.
   */
  create(input: NewGoal): Promise<Goal> {
    return this.table.exclusive(`name:${input.site_id}/${input.name.toLowerCase()}`, async () => {
      if ((await this.list(input.site_id)).some((g) => g.name.toLowerCase() === input.name.toLowerCase())) {
        throw conflict('conflict', `The site already has a goal named "${input.name}".`);
      }
      return this.insert(input);
    });
  }

  private async insert(input: NewGoal): Promise<Goal> {
    const at = nowCh();
    const row: GoalRow = {
      id: newId(), site_id: input.site_id, name: input.name, kind: input.kind,
      event_name: input.kind === 'event' ? input.event_name ?? '' : '',
      path_pattern: input.kind === 'page' ? input.path_pattern ?? '' : '',
      revenue_signal: input.revenue_signal ? 1 : 0, created_at: at, updated_at: at,
    };
    await this.table.put(row);
    return goalFromRow(row);
  }

  async remove(goal: Goal): Promise<void> {
    await this.table.remove({
      id: goal.id, site_id: goal.site_id, name: goal.name, kind: goal.kind, event_name: goal.event_name ?? '',
      path_pattern: goal.path_pattern ?? '', revenue_signal: goal.revenue_signal ? 1 : 0,
      created_at: isoToCh(goal.created_at), updated_at: isoToCh(goal.updated_at),
    });
  }
}
