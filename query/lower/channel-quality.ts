import type { ReportQuery, Source } from '../ast';
import { DIMENSIONS } from '../registry/dimensions';
import type { MetricKey } from '../registry/metrics';
import { and, as, asc, bin, col, desc, lit, select, subquery, type Expr, type SelectNode } from '../sql/ast';
import { baseWhere, goalCondition, goalLeavesCondition, metricColumns, metricScope, pageBounds, relationOf, splitBySource } from './common';
import { FINAL_SETTINGS, attributedPayments, sessionColumns, sessionsInWindow } from './parts';

/**
 * Channel quality (PRODUCT.md §5): per channel, the overview's quality figures (bounce rate, median
 * session, conversion, revenue per visitor) computed the overview's way, each channel's sessions
 * grouped by the channel they came from. Ranked by visitors, then channel.
 */
export const CHANNEL_QUALITY_FIELDS = [
  'visitors', 'bounce_rate', 'median_session_seconds', 'conversion_rate', 'revenue_per_visitor_cents',
] as const satisfies readonly MetricKey[];

const channel = () => DIMENSIONS.channel.label();
/** Visitors with goal filters moved into the aggregates, so all_visitors (the conversion denominator) ignores them. */
const EVENT_PART: MetricKey[] = ['visitors', 'all_visitors', 'converted'];
const SESSION_PART: MetricKey[] = ['sessions', 'bounce_rate', 'median_session_seconds'];

export interface ChannelQualityStatements {
  ranking: SelectNode;
  /** Conversions from raw events when the ranking reads the rollup. */
  conversions?: SelectNode;
  sessions: SelectNode;
  revenue: (channels: readonly string[]) => SelectNode;
}

export function lowerChannelQuality(q: ReportQuery): ChannelQualityStatements {
  const source = q.source!;
  const when = goalLeavesCondition(q.filters);
  const scope = metricScope(q, { when, filterWhen: when });
  const { here, raw } = splitBySource(EVENT_PART, source);
  const byChannel = (keys: MetricKey[], src: Source, narrow?: Expr): SelectNode => select({
    columns: [as(channel(), 'label'), ...metricColumns(keys, src, scope)],
    from: relationOf(q, src),
    where: and(baseWhere(q, { source: src, goalFilters: false }), narrow),
    groupBy: [col('label')],
  });
  return {
    ranking: {
      ...byChannel(here, source),
      // A goal filter narrows `visitors` inside the aggregates (the rows stay for all_visitors), so
      // channels none of whose visitors completed it are dropped here, as a breakdown drops them.
      having: when ? bin('>', col('visitors'), lit(0)) : undefined,
      orderBy: [desc(col('visitors')), asc(col('label'))],
      ...pageBounds(q.paging!),
    },
    conversions: raw.length ? byChannel(raw, 'events', goalCondition(q.counted!)) : undefined,
    sessions: select({
      columns: [as(channel(), 'label'), ...sessionColumns(SESSION_PART)],
      from: subquery(sessionsInWindow(q, ['channel'])),
      groupBy: [col('label')],
      settings: FINAL_SETTINGS,
    }),
    revenue: (channels) => attributedPayments(q, { label: channel(), extras: {}, only: { labels: channels } }),
  };
}
