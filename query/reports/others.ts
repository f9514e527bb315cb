import { ENGAGEMENT_FIELDS, lowerEngagement } from '../lower/engagement';
import { lowerHeatmap } from '../lower/heatmap';
import { lowerRealtime, lowerRealtimeCountries } from '../lower/realtime';
import { figures, numbers, rangeMeta, type ReportRunner, type Row } from './shared';

export const runHeatmap: ReportRunner = async (q, exec) => {
  const rows = await exec<Row>(lowerHeatmap(q));
  const data = rows.map((r) => {
    const n = numbers(r);
    return { day: n.day, hour: n.hour, views: n.views ?? 0, visitors: n.visitors ?? 0 };
  });
  return { data, meta: { range: rangeMeta(q) } };
};

/** UTC buckets, zero-filled like the timeseries. */
export const runEngagement: ReportRunner = async (q, exec) => {
  const rows = await exec<Row>(lowerEngagement(q));
  const byLabel = new Map(rows.map((r) => [String(r.label), numbers(r)]));
  const data = q.buckets!.map((bucket) => ({ bucket, ...figures(byLabel.get(bucket) ?? {}, ENGAGEMENT_FIELDS) }));
  return { data, meta: { range: rangeMeta(q) } };
};

const minutesOf = (q: Parameters<ReportRunner>[0]) => (q.window.kind === 'lookback' ? q.window.minutes : 0);

export const runRealtime: ReportRunner = async (q, exec) => {
  const [row] = await exec<Row>(lowerRealtime(q));
  const n = numbers(row);
  return { data: { visitors: n.visitors ?? 0, views: n.views ?? 0 }, meta: { minutes: minutesOf(q) } };
};

export const runRealtimeCountries: ReportRunner = async (q, exec) => {
  const { limit, offset } = q.paging!;
  const rows = await exec<Row>(lowerRealtimeCountries(q));
  const data = rows.slice(0, limit).map((r) => {
    const n = numbers(r);
    return { country_code: String(r.country_code), visitors: n.visitors ?? 0, views: n.views ?? 0 };
  });
  return { data, meta: { page: { limit, offset, has_more: rows.length > limit }, minutes: minutesOf(q) } };
};
