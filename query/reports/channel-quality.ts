import { CHANNEL_QUALITY_FIELDS, lowerChannelQuality } from '../lower/channel-quality';
import { paymentTotals } from '../lower/parts';
import { figures, numbers, pagedMeta, type ReportRunner, type Row } from './shared';

/** One row per channel on the page: its figures, each from the part that computes it. */
export const runChannelQuality: ReportRunner = async (q, exec) => {
  const s = lowerChannelQuality(q);
  const { limit } = q.paging!;
  const none = Promise.resolve([] as Row[]);
  const [ranked, conversions, sessions, paid] = await Promise.all([
    exec<Row>(s.ranking), s.conversions ? exec<Row>(s.conversions) : none, exec<Row>(s.sessions), exec<Row>(paymentTotals(q)),
  ]);
  const page = ranked.slice(0, limit);
  const channels = page.map((r) => String(r.label));
  // Attribution joins sessions; a window without payments skips it.
  const revenue = channels.length && numbers(paid[0]).payments ? await exec<Row>(s.revenue(channels)) : [];
  const parts = new Map<string, Record<string, number>>();
  for (const r of [...conversions, ...sessions, ...revenue]) parts.set(String(r.label), { ...parts.get(String(r.label)), ...numbers(r) });
  const data = page.map((r) => ({ channel: String(r.label), ...figures({ ...parts.get(String(r.label)), ...numbers(r) }, CHANNEL_QUALITY_FIELDS) }));
  return { data, meta: pagedMeta(q, ranked.length) };
};
