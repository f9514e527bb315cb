import { BOT_KINDS } from '../../ingest/enrich/bots';
import { AI_CHANNEL, CHANNELS } from '../../ingest/enrich/channel';
import { DEVICES } from '../../ingest/enrich/user-agent';
import { withLeadingSlash } from '../../core/glob';
import { stripWww } from '../../ingest/enrich/url';
import type { FilterNode, RollupSource } from '../ast';
import { col, eq, str, type Expr } from '../sql/ast';
import { DIMENSIONS, type DimensionDef, type DimensionKey } from './dimensions';
import type { OperatorKey } from './operators';

/**
 * The 21 `filter_<name>` parameters. Each entry says what the filter compares (its subject), the
 * operator a query-string value uses, how the value is normalised, whether it narrows by a session
 * attribute or by the event itself, and which quarter-hour rollups carry its subject.
 * `goal` has no subject of its own: the planner expands it through the site's goal rules.
 */
export const FILTER_KEYS = [
  'path', 'path_pattern', 'hostname', 'entry_path', 'exit_link', 'file_download', 'goal', 'browser', 'os', 'device',
  'country', 'region', 'city', 'referrer', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'gad_campaign_id',
  'utm_term', 'bot_kind',
] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];

export interface FilterDef {
  level: 'session' | 'event';
  /** The compared expression; null for `goal` (expanded by the planner). */
  subject: (() => Expr) | null;
  /** Only these events can match (link filters); undefined means any event. */
  scope?: () => Expr;
  /** The operator a `filter_<name>=value` parameter means. */
  op: OperatorKey;
  normalize?: (value: string) => string;
  /** Rollups whose rows carry what the filter compares (session attributes, crawler kind, pages). */
  rollups: readonly RollupSource[];
  /**
   * The whole set of values a closed dimension takes: a value is matched in any case and one outside
   * the set is refused (a typo would otherwise answer zeros as if nothing had happened).
   */
  values?: readonly string[];
  /** The label that selects the empty value (`(not set)`, `(direct)`), in any case. */
  emptyLabel?: string;
}

/** The member of a closed set a value names in any case, or the value as given. */
const inCase = (values: readonly string[]) => (v: string) => values.find((x) => x.toLowerCase() === v.toLowerCase()) ?? v;

const BOTH: readonly RollupSource[] = ['slices', 'pages'];

const sessionAttr = (name: string, normalize?: (v: string) => string): FilterDef => ({
  level: 'session', subject: () => col(name), op: 'equals', normalize, rollups: BOTH,
});
/**
 * A session attribute whose breakdown labels empty values (`(not set)`, `(direct)`): the label selects
 * the empty value, so that row can be drilled into. `normalize` runs first.
 */
function labelledAttr(name: DimensionKey, normalize: (v: string) => string = (v) => v): FilterDef {
  const emptyLabel = (DIMENSIONS[name] as DimensionDef).emptyLabel;
  const selectsEmpty = emptyLabel?.toLowerCase();
  return {
    ...sessionAttr(name, (v) => {
      const value = normalize(v);
      // In any case, as the set's own values are (`(NOT SET)` was refused as "not a device").
      return value.toLowerCase() === selectsEmpty ? '' : value;
    }),
    emptyLabel,
  };
}

const linkFilter = (eventName: string): FilterDef => ({
  level: 'event', subject: () => col('link'), scope: () => eq(col('name'), str(eventName)), op: 'equals', rollups: [],
});

export const FILTERS = {
  // Paths are stored with their leading `/`; a value without one is given it, as settings', goals' and funnel
  // steps' paths are (`filter_path=pricing` matched nothing, silently).
  path: { level: 'event', subject: () => col('pathname'), op: 'equals', normalize: withLeadingSlash, rollups: ['pages'] },
  path_pattern: { level: 'event', subject: () => col('pathname'), op: 'glob', normalize: withLeadingSlash, rollups: ['pages'] },
  hostname: { level: 'event', subject: () => col('hostname'), op: 'equals', normalize: (v) => v.toLowerCase(), rollups: ['pages'] },
  entry_path: sessionAttr('entry_path', withLeadingSlash),
  exit_link: linkFilter('exit_link'),
  file_download: linkFilter('file_download'),
  goal: { level: 'event', subject: null, op: 'equals', rollups: [] },
  browser: labelledAttr('browser'),
  os: labelledAttr('os'),
  device: { ...labelledAttr('device', inCase(DEVICES)), values: DEVICES },
  country: sessionAttr('country', (v) => v.toUpperCase()),
  region: sessionAttr('region'),
  city: sessionAttr('city'),
  referrer: labelledAttr('referrer', (v) => stripWww(v.toLowerCase())),
  channel: { ...labelledAttr('channel', inCase(CHANNELS)), values: CHANNELS },
  utm_source: sessionAttr('utm_source'),
  utm_medium: sessionAttr('utm_medium'),
  utm_campaign: sessionAttr('utm_campaign'),
  gad_campaign_id: sessionAttr('gad_campaign_id'),
  utm_term: sessionAttr('utm_term'),
  bot_kind: { level: 'event', subject: () => col('bot_kind'), op: 'equals', rollups: BOTH, normalize: inCase(BOT_KINDS), values: BOT_KINDS },
} satisfies Record<FilterKey, FilterDef>;

/** `filters` ANDed with "the session came from an AI assistant" (AI referrals, AI-referred revenue). */
export function aiChannelOnly(filters: FilterNode | null): FilterNode {
  const channel: FilterNode = { kind: 'cond', filter: 'channel', op: 'equals', value: AI_CHANNEL };
  if (!filters) return channel;
  return { kind: 'and', items: [...(filters.kind === 'and' ? filters.items : [filters]), channel] };
}

/** A filter's value as its subject is compared: e.g. `(not set)` is the empty attribute. */
export function filterValue(name: FilterKey, raw: string): string {
  const def: FilterDef = FILTERS[name];
  return def.normalize ? def.normalize(raw) : raw;
}

export const isFilterKey = (k: string): k is FilterKey => (FILTER_KEYS as readonly string[]).includes(k);

/** The filter tree's conditions, through and/or/not. */
export function leaves(node: FilterNode | null): FilterNode[] {
  if (!node) return [];
  if (node.kind === 'and' || node.kind === 'or') return node.items.flatMap(leaves);
  return node.kind === 'not' ? leaves(node.item) : [node];
}

/**
 * Whether every filter compares a session attribute (carried by every event of the session, so a
 * session matches or not as a whole, whatever the window holds of it). Payments follow such filters
 * to their attributed session's attributes (lower/parts.ts attributedPayments).
 */
export const onlySessionFilters = (node: FilterNode | null): boolean =>
  !!node && leaves(node).every((l) => l.kind === 'cond' && (FILTERS[l.filter] as FilterDef).level === 'session');
