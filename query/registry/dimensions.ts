import { and, bin, col, eq, fn, str, type Expr } from '../sql/ast';

/**
 * Breakdown dimensions (PRODUCT.md §4). One entry per dimension holds every fact about it: what it
 * groups (sessions by an attribute, pageviews by page, link events by target, goal completions),
 * its label expression, which rows are left out, the extra row fields and the figures its rows
 * carry. Session attributes are copied onto every event, so the same column names work on raw
 * events and on the quarter-hour session rollup.
 */
export const DIMENSION_KEYS = [
  'path', 'entry_path', 'exit_link', 'file_download', 'hostname', 'referrer', 'channel', 'utm_campaign', 'utm_term',
  'country', 'region', 'city', 'browser', 'os', 'device', 'goal',
] as const;
export type DimensionKey = (typeof DIMENSION_KEYS)[number];

/** What a row of the dimension counts. */
export type DimensionFamily = 'session' | 'page' | 'link' | 'goal';

export type RowField = 'visitors' | 'views' | 'clicks' | 'goals' | 'revenue_cents';

export interface DimensionDef {
  family: DimensionFamily;
  /** The grouped value shown as `label`. Unused for `goal` (labels come from the goal catalog). */
  label(): Expr;
  /** Rows to leave out (no campaign, no geo, no link); undefined keeps every row. */
  present?(): Expr;
  /** Only these events are grouped (link dimensions); undefined means every event. */
  events?(): Expr;
  /** Extra row fields grouped alongside the label, e.g. `country_code` for region and city. */
  extra: Readonly<Record<string, () => Expr>>;
  fields: readonly RowField[];
  /** How the label shows an empty value; `filter_<name>` with it selects that row (filters.ts). */
  emptyLabel?: string;
}

const SESSION_FIELDS = ['visitors', 'views', 'goals', 'revenue_cents'] as const;
const nonEmpty = (name: string) => () => bin('!=', col(name), str(''));

const session = (name: string, opts: Partial<DimensionDef> = {}): DimensionDef => ({
  family: 'session', label: () => col(name), extra: {}, fields: SESSION_FIELDS, ...opts,
});

/** A session attribute whose empty value gets a row of its own, labelled `emptyLabel`. */
const labelled = (name: string, emptyLabel: string): DimensionDef =>
  session(name, { emptyLabel, label: () => fn('if', eq(col(name), str('')), str(emptyLabel), col(name)) });

const link = (eventName: string): DimensionDef => ({
  family: 'link',
  label: () => col('link'),
  present: nonEmpty('link'),
  events: () => eq(col('name'), str(eventName)),
  extra: {},
  fields: ['visitors', 'clicks'],
});

export const DIMENSIONS = {
  path: { family: 'page', label: () => col('pathname'), events: () => eq(col('name'), str('pageview')), extra: {}, fields: ['visitors', 'views'] },
  hostname: { family: 'page', label: () => col('hostname'), events: () => eq(col('name'), str('pageview')), extra: {}, fields: ['visitors', 'views'] },
  entry_path: session('entry_path', { present: nonEmpty('entry_path') }),
  exit_link: link('exit_link'),
  file_download: link('file_download'),
  // Stored as the referring hostname without `www.`, '' for direct visits and self-referrals.
  referrer: labelled('referrer', '(direct)'),
  channel: labelled('channel', '(not set)'),
  utm_campaign: session('utm_campaign', { present: nonEmpty('utm_campaign') }),
  utm_term: session('utm_term', { present: nonEmpty('utm_term') }),
  country: session('country', { present: nonEmpty('country') }),
  region: session('region', { present: () => and(nonEmpty('region')(), nonEmpty('country')()), extra: { country_code: () => col('country') } }),
  city: session('city', { present: () => and(nonEmpty('city')(), nonEmpty('country')()), extra: { country_code: () => col('country') } }),
  browser: labelled('browser', '(not set)'),
  os: labelled('os', '(not set)'),
  device: labelled('device', '(not set)'),
  goal: { family: 'goal', label: () => col('name'), extra: {}, fields: ['visitors', 'goals'] },
} satisfies Record<DimensionKey, DimensionDef>;

export const isDimension = (k: string): k is DimensionKey => (DIMENSION_KEYS as readonly string[]).includes(k);
