import type { BucketUnit } from './registry/buckets';
import type { DimensionKey } from './registry/dimensions';
import type { FilterKey } from './registry/filters';
import type { OperatorKey } from './registry/operators';
import type { Clamp, WindowRequest } from './window/resolve';

/**
 * `ReportQuery`: what the caller asked, before any SQL exists. Parsing builds it from query-string
 * parameters; planner passes (planner.ts) fill in the resolved fields; lowering (lower/*) turns the
 * planned query into the SQL AST.
 */
export type ReportName =
  | 'overview' | 'timeseries' | 'breakdown' | 'heatmap' | 'engagement' | 'realtime' | 'realtime_countries'
  | 'channel_quality' | 'ai_series' | 'ai_crawlers' | 'ai_pages' | 'ai_referrals'
  | 'search_totals' | 'search_terms' | 'search_term_pages';

export type Bots = 'excluded' | 'included';

/** Which completions a goal predicate accepts: sent event names, page globs, any custom event. */
export interface GoalMatch {
  readonly events: readonly string[];
  readonly pages: readonly string[];
  /** Every custom event (names other than pageview, exit_link, file_download). */
  readonly anyCustom: boolean;
}

export type FilterNode =
  | { readonly kind: 'and'; readonly items: readonly FilterNode[] }
  | { readonly kind: 'or'; readonly items: readonly FilterNode[] }
  | { readonly kind: 'not'; readonly item: FilterNode }
  | { readonly kind: 'cond'; readonly filter: FilterKey; readonly op: OperatorKey; readonly value: string }
  /** A goal filter after expandGoalRules: completions of the named goal. */
  | { readonly kind: 'goal'; readonly label: string; readonly match: GoalMatch };

/** A goal as the read side needs it: a label and what completes it. */
export interface GoalEntry {
  readonly label: string;
  readonly match: GoalMatch;
}

export interface Paging {
  readonly limit: number;
  readonly offset: number;
}

/** Where event-level figures are read from: raw events, or a quarter-hour rollup (sessions, pages). */
export type Source = 'events' | RollupSource;
export type RollupSource = 'slices' | 'pages';

export interface ReportQuery {
  readonly report: ReportName;
  readonly siteId: string;
  readonly currency: string;
  readonly window: WindowRequest;
  readonly tz: string;
  readonly bots: Bots;
  readonly filters: FilterNode | null;
  readonly dimension?: DimensionKey;
  readonly unit?: BucketUnit;
  readonly paging?: Paging;
  /** Search terms a term-pages report is narrowed to. */
  readonly terms?: readonly string[];

  // ---- filled in by the planner -----------------------------------------------------------
  /** UTC [from, to) after period resolution and retention clamping. */
  readonly range?: Clamp;
  /** Gap-filled bucket labels (timeseries, engagement). */
  readonly buckets?: readonly string[];
  /** True when only human events count (bots excluded, or a report that never counts crawlers). */
  readonly humanOnly?: boolean;
  /** Completions that count as `goals` (nominated revenue-signal goals, or all). */
  readonly counted?: GoalMatch;
  /** Every goal label with its rule: the `goal` dimension and goal filters read it. */
  readonly catalog?: readonly GoalEntry[];
  readonly source?: Source;
}
