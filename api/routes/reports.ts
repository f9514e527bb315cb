import { z } from 'zod';
import { LIMIT, OFFSET, type Bounds } from '../../core/paging';
import { runReport, type ReportName } from '../../query';
import { DIMENSION_KEYS } from '../../query/registry/dimensions';
import { BUCKET_UNITS } from '../../query/registry/buckets';
import { FILTER_KEYS } from '../../query/registry/filters';
import { MAX_MINUTES } from '../../query/params';
import { PERIODS } from '../../query/window/resolve';
import { PageMeta, RangeMeta, Timestamp } from '../openapi';
import { singleValued, type RouteRegistrar } from '../route';

/**
 * Analytics reports: thin wrappers over runReport (query/index.ts), which parses the query string
 * itself so the resources helper (share boards, widgets, alerts) gets the same rules. The zod
 * shapes here document the parameters in the OpenAPI document.
 */
// A repeated parameter (an array) is refused before this schema by api/route singleValued.
const opt = (description: string) => z.string().optional().describe(description);
/**
 * A parameter runReport reads as a string, documented as the type it must spell: the route's zod
 * shape only documents (runReport parses and refuses with its own messages).
 */
type Documented = { type: 'integer'; minimum: number; maximum: number; default?: number } | { enum: readonly string[]; default?: string } | { format: 'date-time' };
const typed = (description: string, shape: Documented) => opt(description).openapi(
  'enum' in shape ? { type: 'string', enum: [...shape.enum], ...(shape.default ? { default: shape.default } : {}) } : shape);

const WINDOW = {
  period: typed('the window in tz (default last30d); not with from/to', { enum: PERIODS, default: 'last30d' }),
  from: typed('ISO 8601 date-time with offset; needs to', { format: 'date-time' }),
  to: typed('ISO 8601 date-time with offset; needs from; after from', { format: 'date-time' }),
  tz: opt('IANA timezone for day boundaries (default UTC)'),
  bots: typed('crawlers left out (default) or counted', { enum: ['excluded', 'included'], default: 'excluded' }),
};
const FILTER_SHAPE = Object.fromEntries(FILTER_KEYS.map((k) => [`filter_${k}`, opt(`narrow to one ${k} value`)]));
const bounded = (description: string, b: Bounds) => typed(description, { type: 'integer', minimum: b.min, maximum: b.max, default: b.fallback });
const PAGING = { limit: bounded('rows per page', LIMIT), offset: bounded('rows to skip', OFFSET) };
const UNIT = { unit: typed('bucket size (default by window length)', { enum: BUCKET_UNITS }) };
const minutes = (fallback: number) => bounded(`look-back in minutes (default ${fallback})`, { min: 1, max: MAX_MINUTES, fallback });

const int = z.number().int();

const Overview = z.object({
  visitors: int, sessions: int, views: int, goals: int, payments: int, new_visitors: int, returning_visitors: int,
  bounce_rate: z.number(), conversion_rate: z.number(), avg_session_seconds: int, revenue_cents: int,
  goal_value_cents: int, revenue_per_visitor_cents: int,
});
const TimeseriesRow = z.object({
  bucket: z.string(), visitors: int, views: int, new_visitors: int, returning_visitors: int, crawler_views: int,
  goals: int, goal_value_cents: int,
});
const BreakdownRow = z.object({
  label: z.string(), visitors: int, views: int.optional(), clicks: int.optional(), country_code: z.string().optional(),
  goals: int.optional(), revenue_cents: int.optional(),
});
const HeatmapRow = z.object({ day: int.min(1).max(7), hour: int.min(0).max(23), views: int, visitors: int });
const EngagementRow = z.object({ bucket: z.string(), sessions: int, bounce_rate: z.number(), median_session_seconds: z.number() });
const CountryRow = z.object({ country_code: z.string(), visitors: int, views: int });
const ChannelQualityRow = z.object({
  channel: z.string(), visitors: int, bounce_rate: z.number(), median_session_seconds: z.number(), conversion_rate: z.number(),
  revenue_per_visitor_cents: int,
});
const AiSeriesRow = z.object({ bucket: z.string(), views: int, ai_training: int, ai_search: int, ai_user_fetch: int });
const AiCrawlerRow = z.object({ crawler: z.string(), operator: z.string(), kind: z.string(), views: int, pages: int, last_seen: Timestamp });
const AiPageRow = z.object({ path: z.string(), crawler_views: int, ai_visitors: int, goals: int, revenue_cents: int });
const AiReferralRow = z.object({ assistant: z.string(), visitors: int, views: int, goals: int, revenue_cents: int });
const SearchTotals = z.object({ clicks: int, impressions: int, ctr: z.number(), position: z.number(), partial: z.boolean() }).nullable();
const SearchTermRow = z.object({
  term: z.string(), clicks: int, impressions: int, ctr: z.number(), position: z.number(),
  pages: z.array(z.object({ hostname: z.string(), path: z.string(), clicks: int })).max(3),
});
const TermPageRow = z.object({ term: z.string(), hostname: z.string(), path: z.string(), clicks: int, impressions: int });
const SEARCH_WINDOW = {
  ...WINDOW, bots: opt('accepted; search figures come from the console and hold no crawler split'),
  ...Object.fromEntries(FILTER_KEYS.map((k) => [`filter_${k}`, opt('accepted and ignored: console figures have no event dimensions')])),
};

/** `bots` is checked and has no effect on the /ai/* reports: each decides which traffic it counts. */
const AI_WINDOW = { ...WINDOW, bots: opt('accepted and ignored: the crawler reports always count crawlers, referrals count human visits only') };

interface ReportRoute {
  report: ReportName;
  path: string;
  summary: string;
  query: Record<string, z.ZodType>;
  response: z.ZodType;
  refusals?: Readonly<Record<number, string>>;
  params?: Record<string, z.ZodType>;
}

/** What the report's `meta` holds besides site_id: a window's range, a page, the realtime look-back. */
const metaOf = (query: Record<string, z.ZodType>) => ({
  ...('period' in query ? { range: RangeMeta } : {}),
  ...('limit' in query ? { page: PageMeta } : {}),
  ...('minutes' in query ? { minutes: int } : {}),
});

const ROUTES: ReportRoute[] = [
  { report: 'overview', path: '/sites/{siteId}/overview', summary: 'Headline figures for a window', query: { ...WINDOW, ...FILTER_SHAPE }, response: Overview },
  { report: 'timeseries', path: '/sites/{siteId}/timeseries', summary: 'Figures per time bucket, zero-filled', query: { ...WINDOW, ...UNIT, ...FILTER_SHAPE }, response: z.array(TimeseriesRow) },
  {
    report: 'breakdown', path: '/sites/{siteId}/breakdowns/{dimension}', summary: `Ranked rows by one of: ${DIMENSION_KEYS.join(', ')}`,
    query: { ...WINDOW, ...PAGING, ...FILTER_SHAPE }, response: z.array(BreakdownRow),
    params: { dimension: z.enum(DIMENSION_KEYS as unknown as [string, ...string[]]) },
    refusals: { 400: 'invalid_request: the message names the parameter; unknown_dimension: details.valid lists the dimensions' },
  },
  { report: 'heatmap', path: '/sites/{siteId}/heatmap', summary: 'Views and visitors by weekday and hour in tz (sparse)', query: { ...WINDOW, channel: opt('one channel') }, response: z.array(HeatmapRow) },
  { report: 'engagement', path: '/sites/{siteId}/engagement', summary: 'Sessions, bounce rate and median session length per UTC bucket', query: { ...WINDOW, ...UNIT }, response: z.array(EngagementRow) },
  { report: 'realtime', path: '/sites/{siteId}/realtime', summary: 'Visitors and views in the last minutes (default 10)', query: { minutes: minutes(10) }, response: z.object({ visitors: int, views: int }) },
  {
    report: 'realtime_countries', path: '/sites/{siteId}/realtime/countries', summary: 'Live visitors per country (default 30 minutes)',
    query: { minutes: minutes(30), ...PAGING }, response: z.array(CountryRow),
  },
  {
    report: 'channel_quality', path: '/sites/{siteId}/channel-quality', summary: 'Per channel: visitors, bounce rate, median session, conversion, revenue per visitor',
    query: { ...WINDOW, ...PAGING, ...FILTER_SHAPE }, response: z.array(ChannelQualityRow),
  },
  {
    report: 'ai_series', path: '/sites/{siteId}/ai/series', summary: 'AI crawler page views per bucket, by kind (zero-filled)',
    query: { ...AI_WINDOW, ...UNIT, ...FILTER_SHAPE }, response: z.array(AiSeriesRow),
  },
  {
    report: 'ai_crawlers', path: '/sites/{siteId}/ai/crawlers', summary: 'AI crawlers: operator, kind, page views, pages, last seen',
    query: { ...AI_WINDOW, ...PAGING, ...FILTER_SHAPE }, response: z.array(AiCrawlerRow),
  },
  {
    report: 'ai_pages', path: '/sites/{siteId}/ai/pages', summary: 'Per path: AI crawl views beside AI-referred visitors, goals and revenue',
    query: { ...AI_WINDOW, ...PAGING, ...FILTER_SHAPE }, response: z.array(AiPageRow),
  },
  {
    report: 'ai_referrals', path: '/sites/{siteId}/ai/referrals', summary: 'Human visits referred by AI assistants, per assistant',
    query: { ...AI_WINDOW, ...PAGING, ...FILTER_SHAPE }, response: z.array(AiReferralRow),
  },
  {
    report: 'search_totals', path: '/sites/{siteId}/search/totals', summary: 'Search-console totals (null without a connection or impressions)',
    query: SEARCH_WINDOW, response: SearchTotals,
  },
  {
    report: 'search_terms', path: '/sites/{siteId}/search/terms', summary: 'Search terms, most clicked first, each with its top 3 pages',
    query: { ...SEARCH_WINDOW, ...PAGING }, response: z.array(SearchTermRow),
  },
  {
    report: 'search_term_pages', path: '/sites/{siteId}/search/term-pages', summary: 'Every term and page pairing of the named terms',
    query: { ...SEARCH_WINDOW, ...PAGING, terms: opt('required: search terms separated by a newline (not a comma); 1 to 50') }, response: z.array(TermPageRow),
  },
];

export default function reportRoutes(r: RouteRegistrar): void {
  for (const route of ROUTES) {
    r.route({
      method: 'get', path: route.path, summary: route.summary, tag: 'analytics', scope: 'analytics:read',
      query: z.object(route.query), response: route.response, meta: metaOf(route.query), params: route.params,
      refusals: { ...route.refusals, 503: 'storage_unavailable: the rollup feed failed and recent events are not in the reports yet; see Retry-After' },
      async handler({ app, principal, site, req, params }) {
        const query: Record<string, string | undefined> = singleValued(req.query);
        if (route.report === 'breakdown') query.dimension = params.dimension;
        return runReport(app.store, site, principal.retentionDays, route.report, query);
      },
    });
  }
}
