import type { Site } from '../core/domain';
import { AppError, invalidRequest } from '../core/errors';
import { LIMIT, OFFSET, type Bounds } from '../core/paging';
import { REPORTABLE } from '../core/time';
import { parseInstant, unplussed } from '../core/instant';
import type { FilterNode, ReportName, ReportQuery } from './ast';
import { BUCKET_UNITS } from './registry/buckets';
import { DIMENSION_KEYS, isDimension } from './registry/dimensions';
import { FILTERS, FILTER_KEYS, aiChannelOnly, filterValue, isFilterKey, type FilterDef, type FilterKey } from './registry/filters';
import { PERIODS, type WindowRequest } from './window/resolve';

/**
 * Query-string parameters → `ReportQuery`. Every refusal is a 400 naming the parameter; nothing is
 * clamped or silently dropped except parameters an endpoint documents as ignored (filters on heatmap
 * and engagement, `limit` on timeseries).
 */
export type Params = Record<string, string | undefined>;

/** Canonical zone name, or null when either Intl or ClickHouse does not know it. */
export type ZoneCheck = (tz: string) => string | null;

const int = (name: string, min: number, max: number, fallback: number) => (v: string | undefined): number => {
  if (v === undefined) return fallback;
  // The words of api/paging's lists: one refusal for `limit=0` whatever the route.
  const n = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw invalidRequest(`${name}: must be an integer from ${min} to ${max}`);
  return n;
};

function oneOf<T extends string>(name: string, allowed: readonly T[], v: string | undefined): T | undefined {
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw invalidRequest(`${name}: must be one of ${allowed.join(', ')}`);
  return v as T;
}

function instant(name: 'from' | 'to', v: string): number {
  const ms = windowBound(name, v);
  if (typeof ms === 'string') throw invalidRequest(`${name}: ${ms}`);
  return ms;
}

/**
 * A window bound as a query string gives it (an unencoded `+` arrives as a space), in the instants a
 * report can cover: epoch ms, or the problem in the words that follow its name. The reports and the
 * resource routes' windows (model/notes-window) read their bounds through this one function. `to`
 * is the window's open end, so it may be the first instant of 2200 itself; `from` may not.
 */
export function windowBound(name: 'from' | 'to', v: string): number | string {
  const ms = parseInstant(unplussed(v));
  if (typeof ms === 'string') return ms;
  const beyond = name === 'to' ? ms > REPORTABLE.toMs : ms >= REPORTABLE.toMs;
  return ms < REPORTABLE.fromMs || beyond ? 'must lie between 1970 and 2200' : ms;
}

/** A window parameter refused, and why: the same words wherever the window parameters are taken. */
export interface WindowRefusal {
  param: 'period' | 'from' | 'to';
  message: string;
}

/**
 * The window parameters' rules between each other (reports here; notes, funnels and share boards
 * through model/notes-window): `period` or `from`+`to`, never both, never one bound alone.
 */
export function windowConflict(p: { period?: string; from?: string; to?: string }): WindowRefusal | null {
  const hasFrom = p.from !== undefined;
  const hasTo = p.to !== undefined;
  if (p.period !== undefined && (hasFrom || hasTo)) return { param: 'period', message: 'cannot be combined with from/to; give one or the other' };
  if (hasFrom !== hasTo) return hasFrom ? { param: 'to', message: 'is required when from is given' } : { param: 'from', message: 'is required when to is given' };
  return null;
}

/** An empty or reversed range is refused. */
export const rangeOrder = (fromMs: number, toMs: number): WindowRefusal | null =>
  fromMs >= toMs ? { param: 'from', message: 'must be before to' } : null;

const refuse = (r: WindowRefusal) => invalidRequest(`${r.param}: ${r.message}`);

export function parseWindow(p: Params): WindowRequest {
  const period = oneOf('period', PERIODS, p.period);
  const conflict = windowConflict(p);
  if (conflict) throw refuse(conflict);
  if (p.from !== undefined) {
    const from = instant('from', p.from);
    const to = instant('to', p.to!);
    const reversed = rangeOrder(from, to);
    if (reversed) throw refuse(reversed);
    return { kind: 'range', from, to };
  }
  return { kind: 'period', period: period ?? 'last30d' };
}

export function parseTz(p: Params, zones: ZoneCheck): string {
  if (p.tz === undefined) return 'UTC';
  const tz = p.tz.length <= 64 ? zones(p.tz) : null;
  if (!tz) throw invalidRequest(`tz: "${p.tz.slice(0, 64)}" is not a known IANA timezone`);
  return tz;
}

const MAX_FILTER_VALUE = 2000;

/**
 * One filter condition from a query value (`param` names it in refusals): normalised, and refused
 * outside a closed set (a typo would answer zeros).
 */
function filterCond(param: string, name: FilterKey, raw: string): FilterNode {
  const value = filterValue(name, raw);
  const def: FilterDef = FILTERS[name];
  const closed = def.values;
  if (closed && value !== '' && !closed.includes(value)) {
    const valid = def.emptyLabel ? [...closed, def.emptyLabel] : closed;
    throw invalidRequest(`${param}: "${raw.slice(0, 64)}" is not a ${name.replace('_', ' ')}; valid values are ${valid.join(', ')}`);
  }
  return { kind: 'cond', filter: name, op: FILTERS[name].op, value };
}

/**
 * Every `filter_<name>` parameter, ANDed; unknown names and empty values are refused. Only the
 * filterable reports read them: the others accept and ignore the whole set (the spec's words for
 * engagement), so a dashboard may send one filter set to every report.
 */
export function parseFilters(p: Params): FilterNode | null {
  const items: FilterNode[] = [];
  for (const [key, raw] of Object.entries(p)) {
    if (!key.startsWith('filter_') || raw === undefined) continue;
    const name = key.slice('filter_'.length);
    if (!isFilterKey(name)) throw invalidRequest(`${key}: unknown filter; valid filters are ${FILTER_KEYS.map((k) => 'filter_' + k).join(', ')}`);
    if (raw.length === 0) throw invalidRequest(`${key}: must not be empty`);
    if (raw.length > MAX_FILTER_VALUE) throw invalidRequest(`${key}: must be at most ${MAX_FILTER_VALUE} characters`);
    items.push(filterCond(key, name, raw));
  }
  items.sort((a, b) => (a.kind === 'cond' && b.kind === 'cond' ? a.filter.localeCompare(b.filter) : 0));
  if (items.length === 0) return null;
  return items.length === 1 ? items[0] : { kind: 'and', items };
}

export function unknownDimension(value: string): AppError {
  return new AppError(400, 'unknown_dimension', `dimension: "${value.slice(0, 100)}" is not a breakdown dimension; valid dimensions are ${DIMENSION_KEYS.join(', ')}`, {
    valid: [...DIMENSION_KEYS],
  });
}

const bots = (p: Params) => oneOf('bots', ['excluded', 'included'] as const, p.bots) ?? 'excluded';
const bounded = (name: string, b: Bounds) => int(name, b.min, b.max, b.fallback);
const paging = (p: Params) => ({ limit: bounded('limit', LIMIT)(p.limit), offset: bounded('offset', OFFSET)(p.offset) });
/** Realtime look-back: above 360 refused (spec, Limits). */
export const MAX_MINUTES = 360;
const minutes = (p: Params, fallback: number) => int('minutes', 1, MAX_MINUTES, fallback)(p.minutes);

/**
 * The `/ai/*` reports always count crawler traffic (the spec): `bots` is checked like everywhere
 * else and then has no effect. Filters narrow the events as they do on the human reports.
 */
function aiWindow(p: Params, zones: ZoneCheck) {
  bots(p);
  return { window: parseWindow(p), tz: parseTz(p, zones), bots: 'included' as const, filters: parseFilters(p) };
}

/** Search figures come from the console, not from events: `bots` is checked and has nothing to act on. */
function searchWindow(p: Params, zones: ZoneCheck) {
  return { window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: null };
}

export const MAX_TERMS = 50;
const MAX_TERM_LENGTH = 2000;

/** `terms`: search terms separated by a newline (a comma may be part of a term); blank lines are skipped, repeats collapse. */
export function parseTerms(raw: string | undefined): string[] {
  if (raw === undefined) throw invalidRequest('terms: required; give the search terms separated by a newline');
  // Trimmed as the console's terms are: " widgets" is the term "widgets", not a term that matches nothing.
  const terms = [...new Set(raw.split('\n').map((t) => t.trim()).filter((t) => t !== ''))];
  if (terms.length === 0) throw invalidRequest('terms: required; give the search terms separated by a newline');
  if (terms.length > MAX_TERMS) throw invalidRequest(`terms: at most ${MAX_TERMS} terms per request, got ${terms.length}`);
  if (terms.some((t) => t.length > MAX_TERM_LENGTH)) throw invalidRequest(`terms: each term must be at most ${MAX_TERM_LENGTH} characters`);
  return terms;
}

/** Parse the parameters of one report for one site into a ReportQuery (not yet planned). */
export function parseReport(report: ReportName, p: Params, site: Pick<Site, 'id' | 'currency'>, zones: ZoneCheck): ReportQuery {
  const base = { report, siteId: site.id, currency: site.currency };
  switch (report) {
    case 'overview':
      return { ...base, window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: parseFilters(p) };
    case 'timeseries':
      return { ...base, window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: parseFilters(p), unit: oneOf('unit', BUCKET_UNITS, p.unit) };
    case 'breakdown': {
      const dimension = p.dimension ?? '';
      if (!isDimension(dimension)) throw unknownDimension(dimension);
      return { ...base, window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: parseFilters(p), dimension, paging: paging(p) };
    }
    case 'heatmap': {
      const channel = p.channel;
      if (channel !== undefined && (channel.length === 0 || channel.length > 200)) throw invalidRequest('channel: must be 1 to 200 characters');
      const only = channel === undefined ? null : filterCond('channel', 'channel', channel);
      return { ...base, window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: only };
    }
    case 'engagement':
      return { ...base, window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: null, unit: oneOf('unit', BUCKET_UNITS, p.unit) };
    case 'realtime':
      return { ...base, window: { kind: 'lookback', minutes: minutes(p, 10) }, tz: 'UTC', bots: 'excluded', filters: null };
    case 'realtime_countries':
      return { ...base, window: { kind: 'lookback', minutes: minutes(p, 30) }, tz: 'UTC', bots: 'excluded', filters: null, paging: paging(p) };
    case 'channel_quality':
      return { ...base, window: parseWindow(p), tz: parseTz(p, zones), bots: bots(p), filters: parseFilters(p), paging: paging(p) };
    case 'ai_series':
      return { ...base, ...aiWindow(p, zones), unit: oneOf('unit', BUCKET_UNITS, p.unit) };
    case 'ai_crawlers':
    case 'ai_pages':
      return { ...base, ...aiWindow(p, zones), paging: paging(p) };
    case 'search_totals':
      return { ...base, ...searchWindow(p, zones) };
    case 'search_terms':
      return { ...base, ...searchWindow(p, zones), paging: paging(p) };
    case 'search_term_pages':
      return { ...base, ...searchWindow(p, zones), paging: paging(p), terms: parseTerms(p.terms) };
    case 'ai_referrals': {
      // Human visits whose session came from an AI assistant: the channel narrows every part, payments too.
      const w = aiWindow(p, zones);
      return { ...base, ...w, bots: 'excluded', filters: aiChannelOnly(w.filters), paging: paging(p) };
    }
  }
}
