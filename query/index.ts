import { rollupFeeder } from '../clickhouse/feeder';
import type { Store } from '../clickhouse/store';
import type { Site } from '../core/domain';
import type { ReportName } from './ast';
import { planContext, zoneCheck } from './context';
import { executor } from './execute';
import { parseReport } from './params';
import { plan } from './planner';
import { runAiCrawlers, runAiPages, runAiReferrals, runAiSeries } from './reports/ai';
import { runBreakdown } from './reports/breakdown';
import { runChannelQuality } from './reports/channel-quality';
import { runSearchTermPages, runSearchTerms, runSearchTotals } from './reports/search';
import { runEngagement, runHeatmap, runRealtime, runRealtimeCountries } from './reports/others';
import { runOverview } from './reports/overview';
import type { ReportRunner } from './reports/shared';
import { runTimeseries } from './reports/timeseries';

/**
 * The query compiler's one entry point: query-string parameters in, `{data, meta}` out.
 * parse → ReportQuery → planner passes → SQL AST → compiler → ClickHouse → rows shaped for the API.
 * Invalid parameters throw AppError 400 (unknown breakdown dimension: 400 unknown_dimension).
 */
export type { ReportName } from './ast';

const RUNNERS = {
  overview: runOverview,
  timeseries: runTimeseries,
  breakdown: runBreakdown,
  heatmap: runHeatmap,
  engagement: runEngagement,
  realtime: runRealtime,
  realtime_countries: runRealtimeCountries,
  channel_quality: runChannelQuality,
  ai_series: runAiSeries,
  ai_crawlers: runAiCrawlers,
  ai_pages: runAiPages,
  ai_referrals: runAiReferrals,
  search_totals: runSearchTotals,
  search_terms: runSearchTerms,
  search_term_pages: runSearchTermPages,
} satisfies Record<ReportName, ReportRunner>;

/**
 * `countEveryGoal`: goal figures count every goal, nominated as a revenue signal or not (an alert on a
 * goal measures that goal's completions, each event once, whatever the site nominated).
 */
export interface ReportOptions {
  countEveryGoal?: boolean;
}

/** Parse and plan without running: benchmarks time the runner alone on the planned query. */
export async function planReport(
  store: Store, site: Site, retentionDays: number, report: ReportName, params: Record<string, string | undefined>, opts: ReportOptions = {},
) {
  const parsed = parseReport(report, params, site, await zoneCheck(store));
  return plan(parsed, { ...(await planContext(store, site, retentionDays, parsed)), countEveryGoal: opts.countEveryGoal });
}

export { RUNNERS };

export async function runReport(
  store: Store,
  site: Site,
  retentionDays: number,
  report: ReportName,
  params: Record<string, string | undefined>,
  opts: ReportOptions = {},
): Promise<{ data: unknown; meta: Record<string, unknown> }> {
  const planned = await planReport(store, site, retentionDays, report, params, opts);
  // Read-your-writes: every event acknowledged before this report is in the rollups it reads (503 when
  // the feed that should have put them there failed, rather than figures missing them).
  await rollupFeeder(store).upToDate();
  return RUNNERS[report](planned, executor(store));
}
