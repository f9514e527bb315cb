import { AI_BOT_KINDS } from '../../ingest/enrich/bots';
import { aiAssistantSpellings } from '../../ingest/enrich/sources';
import type { ReportQuery } from '../ast';
import { AI_CHANNEL } from '../../ingest/enrich/channel';
import { aiChannelOnly } from '../registry/filters';
import type { DimensionDef } from '../registry/dimensions';
import { isPageview } from '../registry/metrics';
import {
  and, as, asc, bin, col, desc, eq, fn, inSet, lambda, lit, or, param, select, str, table, type Expr, type SelectNode,
} from '../sql/ast';
import { TABLES, baseWhere, goalCondition, human, metricColumns, metricScope, pageBounds, relationOf, timeOf } from './common';
import { attributedPayments } from './parts';
import { bucketLabel } from './timeseries';

/**
 * The `/ai/*` reports (PRODUCT.md §5): crawler traffic of the AI kinds (training, search, fetching
 * for a user) per time bucket, per crawler and per page, and human visits referred by AI assistants.
 * Crawler figures always count crawlers, whatever `bots` says.
 */
export const aiCrawler = (): Expr => inSet(col('bot_kind'), param('Array(String)', [...AI_BOT_KINDS]));
const fromAssistant = () => and(human(), eq(col('channel'), str(AI_CHANNEL)));


/** AI crawler page views per bucket and kind (the runner pivots kinds into columns). */
export function lowerAiSeries(q: ReportQuery): SelectNode {
  const source = q.source!;
  return select({
    columns: [as(bucketLabel(q, timeOf(source)), 'label'), as(fn('toString', col('bot_kind')), 'kind'), ...metricColumns(['views'], source, metricScope(q))],
    from: relationOf(q, source),
    where: and(baseWhere(q, { source }), aiCrawler()),
    groupBy: [col('label'), col('kind')],
  });
}

/** Per crawler (name, operator, kind): page views, distinct pages viewed, the last event's time. */
export function lowerAiCrawlers(q: ReportQuery): SelectNode {
  const name = fn('if', eq(col('crawler_name'), str('')), str('(unknown)'), fn('toString', col('crawler_name')));
  return select({
    columns: [
      as(name, 'crawler'), as(fn('toString', col('crawler_operator')), 'operator'), as(fn('toString', col('bot_kind')), 'kind'),
      as(fn('countIf', isPageview()), 'views'),
      as(fn('uniqExactIf', col('pathname'), isPageview()), 'pages'),
      as(fn('toUnixTimestamp64Milli', fn('max', col('ts'))), 'last_seen_ms'),
    ],
    from: table(TABLES.events),
    where: and(baseWhere(q, { source: 'events' }), aiCrawler()),
    groupBy: [col('crawler'), col('operator'), col('kind')],
    orderBy: [desc(col('views')), asc(col('crawler')), asc(col('operator')), asc(col('kind'))],
    ...pageBounds(q.paging!),
  });
}

/**
 * Per path: AI crawler page views beside the human visitors whose session an AI assistant referred
 * (a page view of the path) and their counted goal completions on it. A path appears when it has
 * at least one of them.
 */
export function lowerAiPages(q: ReportQuery): SelectNode {
  const counted = goalCondition(q.counted!);
  const crawled = and(aiCrawler(), isPageview());
  const referred = and(fromAssistant(), or(isPageview(), counted));
  return select({
    columns: [
      as(col('pathname'), 'path'),
      as(fn('countIf', crawled), 'crawler_views'),
      as(fn('uniqExactIf', col('visitor_id'), and(fromAssistant(), isPageview())), 'ai_visitors'),
      as(fn('countIf', and(fromAssistant(), counted)), 'goals'),
    ],
    from: table(TABLES.events),
    where: and(baseWhere(q, { source: 'events' }), or(crawled, referred)),
    groupBy: [col('path')],
    orderBy: [desc(col('crawler_views')), desc(col('ai_visitors')), asc(col('path'))],
    ...pageBounds(q.paging!),
  });
}

/**
 * Revenue of AI-referred sessions by their entry path: payments attributed (as everywhere) to the
 * paying visitor's latest session, when that session came from an AI assistant and had an event in
 * the window matching the filters.
 */
export function aiPagesRevenue(q: ReportQuery, paths: readonly string[]): SelectNode {
  return attributedPayments({ ...q, filters: aiChannelOnly(q.filters), humanOnly: true }, { label: col('entry_path'), extras: {}, only: { labels: paths } });
}

/**
 * The assistant a session came from, whichever way the visit was tagged: its utm_source (ChatGPT
 * adds `utm_source=chatgpt.com`) or else its referring host, read through the AI assistants of the
 * source table, so `chatgpt.com`, `chat.openai.com` and `chatgpt` are one row, `ChatGPT`.
 */
const ASSISTANTS = aiAssistantSpellings();

function assistantLabel(): Expr {
  const { spellings, names } = ASSISTANTS;
  const key = fn('if', bin('!=', col('utm_source'), str('')), fn('lower', fn('trimBoth', col('utm_source'))), col('referrer'));
  const known = fn('arrayFirst', lambda(['c'], fn('has', param('Array(String)', spellings), col('c'))), spellingsOf(key));
  // No spelling is empty, so an unknown key ('' from arrayFirst) falls through to itself.
  return fn('transform', known, param('Array(String)', spellings), param('Array(String)', names), key);
}

/**
 * The spellings a key may be known by, in the order the channel rule reads them (ingest/enrich/sources
 * lookupSourceName, lookupHost): the key itself, then as a host without `www.` and each parent domain
 * of two labels or more, so `m.perplexity.ai` and `utm_source=www.chatgpt.com` are the assistant the
 * channel counted them for, not rows of their own.
 */
function spellingsOf(key: Expr): Expr {
  const parts = fn('splitByChar', str('.'), fn('replaceRegexpOne', key, str('^www\\.'), str('')));
  const suffixes = fn('arrayMap', lambda(['i'], fn('arrayStringConcat', fn('arraySlice', parts, col('i')), str('.'))), fn('range', lit(1), fn('length', parts)));
  return fn('arrayPushFront', suffixes, key);
}

/** AI referrals group sessions (narrowed to the AI channel by the parser) by assistant, like a session dimension. */
export const ASSISTANT: DimensionDef = {
  family: 'session', label: assistantLabel, extra: {}, fields: ['visitors', 'views', 'goals', 'revenue_cents'],
};
