import { col, eq, fn, str, type Expr } from '../sql/ast';
import { referrerLabel } from './dimensions';
import type { OperatorKey } from './operators';

/**
 * The 21 `filter_<name>` parameters. Each entry says what the filter compares (its subject), the
 * operator a query-string value uses, how the value is normalised, and whether it narrows by a
 * session attribute (then the quarter-hour session rollup can answer) or by the event itself.
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
  /** Also holds on the session rollup (session attributes and crawler kind are on its rows). */
  rollup: boolean;
}

const sessionAttr = (name: string, normalize?: (v: string) => string): FilterDef => ({
  level: 'session', subject: () => col(name), op: 'equals', normalize, rollup: true,
});

const linkFilter = (eventName: string): FilterDef => ({
  level: 'event', subject: () => col('link'), scope: () => eq(col('name'), str(eventName)), op: 'equals', rollup: false,
});

export const FILTERS = {
  path: { level: 'event', subject: () => col('pathname'), op: 'equals', rollup: false },
  path_pattern: { level: 'event', subject: () => col('pathname'), op: 'glob', rollup: false },
  hostname: { level: 'event', subject: () => col('hostname'), op: 'equals', normalize: (v) => v.toLowerCase(), rollup: false },
  entry_path: sessionAttr('entry_path'),
  exit_link: linkFilter('exit_link'),
  file_download: linkFilter('file_download'),
  goal: { level: 'event', subject: null, op: 'equals', rollup: false },
  browser: sessionAttr('browser'),
  os: sessionAttr('os'),
  device: sessionAttr('device'),
  country: sessionAttr('country', (v) => v.toUpperCase()),
  region: sessionAttr('region'),
  city: sessionAttr('city'),
  referrer: { level: 'session', subject: referrerLabel, op: 'equals', normalize: (v) => v.toLowerCase().replace(/^www\./, ''), rollup: true },
  channel: sessionAttr('channel'),
  utm_source: sessionAttr('utm_source'),
  utm_medium: sessionAttr('utm_medium'),
  utm_campaign: sessionAttr('utm_campaign'),
  gad_campaign_id: sessionAttr('gad_campaign_id'),
  utm_term: sessionAttr('utm_term'),
  bot_kind: { level: 'event', subject: () => fn('toString', col('bot_kind')), op: 'equals', rollup: true },
} satisfies Record<FilterKey, FilterDef>;

export const isFilterKey = (k: string): k is FilterKey => (FILTER_KEYS as readonly string[]).includes(k);
