import type { ReportName } from '../ast';

/**
 * What the planner needs to know about each report, in one entry per report: which events it
 * counts, whether it has gap-filled time buckets, whether it reads the site's goal rules, and
 * whether it must read raw events. A new report is one entry here plus its lowering and runner.
 */
export interface ReportTraits {
  /**
   * `asked`: human events, crawlers too with `bots=included`. `human`: human events whatever `bots`
   * says (realtime, AI referrals). `crawlers`: every event; the report narrows to AI crawlers itself.
   */
  bots: 'asked' | 'human' | 'crawlers';
  /** Gap-filled buckets cut in the request's tz (`local`) or at UTC boundaries (`utc`). */
  buckets?: 'local' | 'utc';
  /** Counts goals (goals, conversion, the goal dimension). Goal filters read the rules on every report. */
  goals: boolean;
  /** Only raw events can answer (minutes-long windows, crawler names, paths beside sessions). */
  rawOnly?: boolean;
}

export const REPORTS = {
  overview: { bots: 'asked', goals: true },
  timeseries: { bots: 'asked', buckets: 'local', goals: true },
  breakdown: { bots: 'asked', goals: true },
  heatmap: { bots: 'asked', goals: false },
  engagement: { bots: 'asked', buckets: 'utc', goals: false },
  realtime: { bots: 'human', goals: false, rawOnly: true },
  realtime_countries: { bots: 'human', goals: false, rawOnly: true },
  channel_quality: { bots: 'asked', goals: true },
  ai_series: { bots: 'crawlers', buckets: 'local', goals: false },
  ai_crawlers: { bots: 'crawlers', goals: false, rawOnly: true },
  ai_pages: { bots: 'crawlers', goals: true, rawOnly: true },
  ai_referrals: { bots: 'human', goals: true },
  // Search-console rows are not events: these read their own table (lower/search.ts).
  search_totals: { bots: 'asked', goals: false, rawOnly: true },
  search_terms: { bots: 'asked', goals: false, rawOnly: true },
  search_term_pages: { bots: 'asked', goals: false, rawOnly: true },
} satisfies Record<ReportName, ReportTraits>;

export const traitsOf = (report: ReportName): ReportTraits => REPORTS[report];
