import { z } from 'zod';
import { text, verbatim } from '../core/fields';
import { withLeadingSlash } from '../core/glob';
import { BUILTIN_EVENTS } from './goals';
import { MetaTable, chToIso, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { newId } from '../core/ids';
import { fetchSize } from '../core/paging';

/**
 * Funnels: ordered steps a visitor passes within `window_seconds`. Definitions are stored, figures
 * are computed at read time (query/funnel-report.ts), so editing a funnel changes its past figures.
 */
export const MATCH_OPS = ['equals', 'starts_with', 'ends_with', 'contains', 'glob'] as const;
export type MatchOp = (typeof MATCH_OPS)[number];

/** The only windows allowed: windowFunnel takes its window as a literal, so it comes from this list. */
export const FUNNEL_WINDOWS = [3600, 86400, 604800, 2592000, 7776000] as const;
export type FunnelWindow = (typeof FUNNEL_WINDOWS)[number];

const match = z.enum(MATCH_OPS, { error: `must be one of ${MATCH_OPS.join(', ')}` }).nullish().transform((m) => m ?? 'equals');

/** Matches anchored at the path's start: a value without its leading `/` is given one, as goals' and settings' paths are. */
const ANCHORED: readonly MatchOp[] = ['equals', 'starts_with', 'glob'];

const viewStep = z.strictObject({ kind: z.literal('view'), match, value: text(500, 'the page path (or pattern) to match') })
  .transform((s) => (ANCHORED.includes(s.match) ? { ...s, value: withLeadingSlash(s.value) } : s));

// Sent goals are custom events: a step equal to pageview, exit_link or file_download matched nothing.
const goalStep = z.strictObject({ kind: z.literal('goal'), match, value: verbatim(500, 'the goal or event name to match') })
  .refine((s) => !(s.match === 'equals' && BUILTIN_EVENTS.includes(s.value)),
    { path: ['value'], message: 'must name a goal or custom event; page views are view steps, and exit_link and file_download are reported per link' });

export const StepSchema = z.discriminatedUnion(
  'kind',
  [
    viewStep,
    goalStep,
    // A payment step is any succeeded payment of the visitor: there is nothing to match.
    z.strictObject({
      kind: z.literal('payment'),
      match: z.null({ error: 'a payment step takes no match' }).optional(),
      value: z.null({ error: 'a payment step takes no value' }).optional(),
    }),
  ],
  { error: (i) => (i.code === 'invalid_union' ? 'must be view, goal or payment' : undefined) },
);

export type Step = { kind: 'view' | 'goal'; match: MatchOp; value: string } | { kind: 'payment' };

export const stepsSchema = z
  .array(StepSchema, { error: 'must be an array of steps' })
  .min(2, 'needs at least 2 steps')
  .max(10, 'allows at most 10 steps')
  .transform((steps): Step[] => steps.map((s) => (s.kind === 'payment' ? { kind: 'payment' } : s)));

export const windowSecondsSchema = z.union(
  FUNNEL_WINDOWS.map((w) => z.literal(w)),
  { error: `must be one of ${FUNNEL_WINDOWS.join(', ')}` },
);

export interface FunnelRow {
  id: string; site_id: string; name: string; steps: string; window_seconds: number; created_at: string; updated_at: string;
}

export interface Funnel {
  id: string; name: string; steps: Step[]; window_seconds: FunnelWindow; created_at: string; updated_at: string;
}

export const funnelOut = (r: FunnelRow): Funnel => ({
  id: r.id, name: r.name, steps: JSON.parse(r.steps) as Step[], window_seconds: r.window_seconds as FunnelWindow,
  created_at: chToIso(r.created_at)!, updated_at: chToIso(r.updated_at)!,
});

export class FunnelsRepo {
  private readonly table: MetaTable<FunnelRow>;

  constructor(store: Store) {
    this.table = new MetaTable(store, 'funnels', ['id', 'site_id', 'name', 'steps', 'window_seconds', 'created_at', 'updated_at']);
  }

  create(siteId: string, input: { name: string; steps: Step[]; window_seconds: FunnelWindow }): Promise<FunnelRow> {
    const at = nowCh();
    return this.table.put({
      id: newId(), site_id: siteId, name: input.name, steps: JSON.stringify(input.steps), window_seconds: input.window_seconds,
      created_at: at, updated_at: at,
    });
  }

  get(siteId: string, id: string): Promise<FunnelRow | undefined> {
    return this.table.ofSite(siteId, id);
  }

  list(siteId: string, page: { limit: number; offset: number }): Promise<FunnelRow[]> {
    return this.table.select('site_id = {s:UUID}', { s: siteId, lim: fetchSize(page), off: page.offset },
      'ORDER BY created_at, id LIMIT {lim:UInt32} OFFSET {off:UInt64}');
  }

  /** The funnel with `patch` applied; undefined when the site has no such funnel. */
  update(siteId: string, id: string, patch: { name?: string; steps?: Step[]; window_seconds?: FunnelWindow }): Promise<FunnelRow | undefined> {
    return this.table.editOfSite(siteId, id, (row) => this.table.put({
      ...row,
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.steps !== undefined ? { steps: JSON.stringify(patch.steps) } : {}),
      ...(patch.window_seconds !== undefined ? { window_seconds: patch.window_seconds } : {}),
      updated_at: nowCh(),
    }));
  }

  /** true, or undefined when the site has no such funnel. */
  remove(siteId: string, id: string): Promise<true | undefined> {
    return this.table.removeOfSite(siteId, id);
  }
}
