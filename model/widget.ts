import { MetaTable, chToIso, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { conflict } from '../core/errors';
import { newSlug } from './share';

/**
 * The embeddable widget: one per site, public at /widget/<slug> while enabled. It starts off, and
 * can only be switched on once the site has recorded at least one event (a card with nothing to
 * show is a broken embed). Revenue is published only with `publish_revenue`. DELETE removes it, so
 * a leaked embed address can be retired: a later PUT makes a new widget with a new slug, off.
 */
export const WIDGET_TYPES = ['realtime', 'recent', 'analytics', 'revenue'] as const;
export const WIDGET_METRICS = ['online', 'visitors', 'views'] as const;
export const CHART_STYLES = ['bar', 'area'] as const;
export type WidgetType = (typeof WIDGET_TYPES)[number];
export type WidgetMetric = (typeof WIDGET_METRICS)[number];
export type ChartStyle = (typeof CHART_STYLES)[number];

export interface WidgetRow {
  site_id: string; slug: string; type: WidgetType; metric: WidgetMetric; enabled: number; chart_style: ChartStyle;
  publish_revenue: number; created_at: string; updated_at: string;
}

export interface WidgetInput {
  type?: WidgetType; metric?: WidgetMetric; enabled?: boolean; chart_style?: ChartStyle; publish_revenue?: boolean;
}

const DEFAULTS = { type: 'analytics', metric: 'visitors', enabled: 0, chart_style: 'bar', publish_revenue: 0 } as const;

/** Model-layer existence check: has the site recorded any event at all? */
export async function siteHasEvents(store: Store, siteId: string): Promise<boolean> {
  const rows = await store.query(`SELECT 1 FROM ${store.table('events')} WHERE site_id = {s:UUID} LIMIT 1`, { s: siteId });
  return rows.length > 0;
}

export class WidgetRepo {
  private readonly table: MetaTable<WidgetRow>;

  constructor(private readonly store: Store) {
    this.table = new MetaTable(store, 'widgets', [
      'site_id', 'slug', 'type', 'metric', 'enabled', 'chart_style', 'publish_revenue', 'created_at', 'updated_at',
    ]);
  }

  get(siteId: string): Promise<WidgetRow | undefined> {
    return this.table.one('site_id = {s:UUID}', { s: siteId });
  }

  bySlug(slug: string): Promise<WidgetRow | undefined> {
    return this.table.one('slug = {slug:String}', { slug });
  }

  /** Create or update, over the widget as the previous save left it; omitted fields keep their value (or the starting default). */
  save(siteId: string, input: WidgetInput): Promise<WidgetRow> {
    return this.table.exclusive(siteId, async () => this.write(siteId, await this.get(siteId), input));
  }

  /** The widget removed (its card answers 404 from now on); undefined when the site has none. */
  remove(siteId: string): Promise<WidgetRow | undefined> {
    return this.table.editOne(siteId, 'site_id = {s:UUID}', { s: siteId }, async (row) => {
      await this.table.remove(row);
      return row;
    });
  }

  private async write(siteId: string, prev: WidgetRow | undefined, input: WidgetInput): Promise<WidgetRow> {
    if (input.enabled === true && !(await siteHasEvents(this.store, siteId))) {
      throw conflict('no_events', 'The widget can be switched on once the site has recorded at least one event.');
    }
    const now = nowCh();
    const base = prev ?? { ...DEFAULTS, site_id: siteId, slug: newSlug(), created_at: now, updated_at: now };
    return this.table.put({
      ...base,
      ...(input.type ? { type: input.type } : {}),
      ...(input.metric ? { metric: input.metric } : {}),
      ...(input.chart_style ? { chart_style: input.chart_style } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
      ...(input.publish_revenue !== undefined ? { publish_revenue: input.publish_revenue ? 1 : 0 } : {}),
      updated_at: now,
    });
  }
}

export function widgetOut(row: WidgetRow, viewCount: number) {
  return {
    url: `/widget/${row.slug}`, slug: row.slug, type: row.type, metric: row.metric, enabled: !!row.enabled,
    chart_style: row.chart_style, publish_revenue: !!row.publish_revenue, created_at: chToIso(row.created_at)!,
    updated_at: chToIso(row.updated_at)!, view_count: viewCount,
  };
}
