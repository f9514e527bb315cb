import { randomBytes } from 'node:crypto';
import { chToIso, chToMs, isoToCh, MetaTable, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { nowMs } from '../core/clock';
import type { Site } from '../core/domain';

/**
 * A site's public share board: one per site, reached at /share/<slug> without any key. DELETE
 * deactivates it; a later PUT issues a new slug, so an old link never comes back to life.
 */
export const SECTIONS = [
  'geo', 'tech', 'goals', 'pages', 'funnel', 'heatmap', 'revenue', 'sources', 'ai_panel', 'keywords', 'channel_quality',
  'imported_history',
] as const;
export type Section = (typeof SECTIONS)[number];
export type Panels = Record<Section, boolean>;

/** Everything is shown by default except revenue, which is only ever published on purpose. */
export const DEFAULT_PANELS: Panels = Object.fromEntries(SECTIONS.map((s) => [s, s !== 'revenue'])) as Panels;
export const DEFAULT_MAX_RANGE_DAYS = 90;
const DAY = 86_400_000;

export interface ShareRow {
  site_id: string; slug: string; label: string; active: number; panels: string; max_range_days: number;
  expires_at: string | null; expires_in_days: number | null; created_at: string; updated_at: string;
}

export interface ShareInput {
  panels: Partial<Panels>;
  label?: string;
  max_range_days?: number;
  /** undefined: keep the previous choice; null: no expiry. */
  expires_in_days?: number | null;
}

/** 128 random bits, URL-safe: unguessable, and never shaped like an API key. */
export const newSlug = () => randomBytes(16).toString('base64url');

/** The shape newSlug makes: anything else is not looked up at all. */
export const isSlug = (s: string) => /^[A-Za-z0-9_-]{22}$/.test(s);

export class ShareRepo {
  private readonly table: MetaTable<ShareRow>;

  constructor(store: Store) {
    this.table = new MetaTable(store, 'share_boards', [
      'site_id', 'slug', 'label', 'active', 'panels', 'max_range_days', 'expires_at', 'expires_in_days', 'created_at', 'updated_at',
    ]);
  }

  get(siteId: string): Promise<ShareRow | undefined> {
    return this.table.one('site_id = {s:UUID}', { s: siteId });
  }

  bySlug(slug: string): Promise<ShareRow | undefined> {
    return this.table.one('slug = {slug:String} AND active = 1', { slug });
  }

  /** Create or update, over the board as the previous save left it. Every save restarts the expiry clock. */
  save(site: Site, input: ShareInput): Promise<ShareRow> {
    return this.table.exclusive(site.id, async () => this.write(site, await this.get(site.id), input));
  }

  private write(site: Site, prev: ShareRow | undefined, input: ShareInput): Promise<ShareRow> {
    const now = nowMs();
    const live = prev?.active ? prev : undefined;
    const days = input.expires_in_days !== undefined ? input.expires_in_days : prev?.expires_in_days ?? null;
    // A board re-created after DELETE is a new board (new slug, created_at, views): it keeps the closed
    // board's layout but starts with revenue off, as every new board does, unless this save asks.
    const kept = prev ? (JSON.parse(prev.panels) as Partial<Panels>) : {};
    if (!live) kept.revenue = false;
    const panels = { ...DEFAULT_PANELS, ...kept, ...input.panels };
    return this.table.put({
      site_id: site.id,
      slug: live?.slug ?? newSlug(),
      label: input.label ?? prev?.label ?? site.name,
      active: 1,
      panels: JSON.stringify(panels),
      max_range_days: input.max_range_days ?? prev?.max_range_days ?? DEFAULT_MAX_RANGE_DAYS,
      expires_at: days === null ? null : isoToCh(new Date(now + days * DAY)),
      expires_in_days: days,
      created_at: live?.created_at ?? isoToCh(new Date(now)),
      updated_at: isoToCh(new Date(now)),
    });
  }

  /** The board switched off (a later save issues a new slug); undefined when the site has none. */
  deactivate(siteId: string): Promise<ShareRow | undefined> {
    return this.table.editOne(siteId, 'site_id = {s:UUID}', { s: siteId }, async (row) =>
      row.active ? this.table.put({ ...row, active: 0, updated_at: nowCh() }) : row);
  }
}

export const isLive = (row: ShareRow, now = nowMs()) =>
  !!row.active && (row.expires_at === null || chToMs(row.expires_at) > now);

export const panelsOf = (row: ShareRow): Panels => ({ ...DEFAULT_PANELS, ...(JSON.parse(row.panels) as Partial<Panels>) });

/** Exactly the spec's Share board fields: `expires_in_days` is a body field, shown through expires_at and days_left. */
export function shareOut(row: ShareRow, viewCount: number) {
  const expires = chToIso(row.expires_at);
  return {
    url: `/share/${row.slug}`, slug: row.slug, label: row.label, active: !!row.active, panels: panelsOf(row),
    max_range_days: row.max_range_days,
    days_left: expires === null ? null : Math.max(0, Math.ceil((Date.parse(expires) - nowMs()) / DAY)),
    created_at: chToIso(row.created_at)!, updated_at: chToIso(row.updated_at)!, expires_at: expires, view_count: viewCount,
  };
}
