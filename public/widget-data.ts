import type { AppContext } from '../api/context';
import { nowMs } from '../core/clock';
import { isoSecondsInZone } from '../model/notes-window';
import type { WidgetType } from '../model/widget';
import type { ReportName } from '../query';
import type { RunReport } from './share-data';
import type { LiveWidget } from './widget';

/**
 * The widget card's figures, from the query helper's reports, in the site's timezone. The type sets
 * the window and the chart's buckets; the metric sets the headline (`online` = visitors active in the
 * last 10 minutes, the realtime report's own default). Money appears only with publish_revenue.
 */
const MINUTE = 60_000;

interface TypeDef {
  caption: string;
  unit: 'minute' | 'hour' | 'day';
  window(now: number, tz: string): { from: string; to: string } | { period: string };
}

const TYPES = {
  // The last 30 minutes, one bar per minute, the current minute included.
  realtime: {
    caption: 'last 30 minutes', unit: 'minute',
    window: (now, tz) => {
      const end = Math.floor(now / MINUTE) * MINUTE + MINUTE;
      return { from: isoSecondsInZone(end - 30 * MINUTE, tz), to: isoSecondsInZone(end, tz) };
    },
  },
  recent: { caption: 'last 24 hours', unit: 'hour', window: () => ({ period: 'last24h' }) },
  analytics: { caption: 'last 30 days', unit: 'day', window: () => ({ period: 'last30d' }) },
  revenue: { caption: 'last 30 days', unit: 'day', window: () => ({ period: 'last30d' }) },
} satisfies Record<WidgetType, TypeDef>;

const ONLINE_MINUTES = '10';

type Row = Record<string, number | string>;

export async function widgetData(app: AppContext, w: LiveWidget, run: RunReport) {
  const { row, site } = w;
  const tz = site.timezone;
  const type: TypeDef = TYPES[row.type];
  const window = { ...type.window(nowMs(), tz), tz };
  const report = async <T>(name: ReportName, params: Record<string, string> = {}) =>
    (await run(app.store, site, w.retentionDays, name, params)).data as T;

  const seriesField = row.metric === 'views' ? 'views' : 'visitors';
  const [overview, series, online] = await Promise.all([
    report<Row>('overview', window),
    report<Row[]>('timeseries', { ...window, unit: type.unit }),
    row.metric === 'online' ? report<Row>('realtime', { minutes: ONLINE_MINUTES }) : Promise.resolve(undefined),
  ]);
  const money = !!row.publish_revenue;
  const revenueHeadline = row.type === 'revenue' && money;
  const headline = revenueHeadline
    ? { label: `Revenue · ${type.caption}`, value: Number(overview.revenue_cents ?? 0), unit: 'money' as const }
    : online
      ? { label: 'Online now', value: Number(online.visitors ?? 0), unit: 'count' as const }
      : { label: `${row.metric === 'views' ? 'Page views' : 'Visitors'} · ${type.caption}`, value: Number(overview[seriesField] ?? 0), unit: 'count' as const };
  return {
    site: { name: site.name, domain: site.domain },
    type: row.type, metric: row.metric, chart_style: row.chart_style,
    ...headline,
    series: series.map((r) => ({ bucket: r.bucket, value: r[seriesField] })),
    ...(money ? { revenue: { revenue_cents: Number(overview.revenue_cents ?? 0), currency: site.currency } } : {}),
  };
}
