import { lowerTimeseries, TIMESERIES_FIELDS } from '../lower/timeseries';
import { figures, numbers, rangeMeta, type ReportRunner, type Row } from './shared';

/** One row per planned bucket label, zero-filled; no cap on the number of rows. */
export const runTimeseries: ReportRunner = async (q, exec) => {
  const s = lowerTimeseries(q);
  const [events, goals, fresh] = await Promise.all([
    exec<Row>(s.events), s.goals ? exec<Row>(s.goals) : Promise.resolve([] as Row[]), exec<Row>(s.newVisitors),
  ]);
  const byLabel = new Map<string, Record<string, number>>();
  for (const r of [...events, ...goals, ...fresh]) {
    const label = String(r.label);
    byLabel.set(label, { ...byLabel.get(label), ...numbers(r) });
  }
  const data = q.buckets!.map((bucket) => ({ bucket, ...figures(byLabel.get(bucket) ?? {}, TIMESERIES_FIELDS) }));
  return { data, meta: { range: rangeMeta(q) } };
};
