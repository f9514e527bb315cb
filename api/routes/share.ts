import { z } from 'zod';
import { notFound } from '../../core/errors';
import { SECTIONS, ShareRepo, shareOut, type Panels, type ShareRow } from '../../model/share';
import { viewCounter } from '../../model/share-views';
import type { AppContext } from '../context';
import type { RouteRegistrar } from '../route';
import { Timestamp } from '../openapi';
import { label, typeError } from '../../core/fields';

const ShareOut = z.object({
  url: z.string(), slug: z.string(), label: z.string(), active: z.boolean(),
  panels: z.object(Object.fromEntries(SECTIONS.map((s) => [s, z.boolean()]))),
  max_range_days: z.number().int(), days_left: z.number().int().nullable(),
  created_at: Timestamp, updated_at: Timestamp, expires_at: Timestamp.nullable(), view_count: z.number().int(),
});

const flag = z.boolean({ error: 'must be true or false' }).optional();
/** A number of days, 1 to 3650. */
const days = (kind: string) => z.number(typeError(kind))
  .int('must be a whole number of days').min(1, 'must be between 1 and 3650 days').max(3650, 'must be between 1 and 3650 days');
const ShareBody = z.strictObject({
  ...(Object.fromEntries(SECTIONS.map((s) => [s, flag])) as Record<(typeof SECTIONS)[number], typeof flag>),
  label: label(200).optional(),
  max_range_days: days('a whole number of days').optional(),
  expires_in_days: days('a whole number of days or null').nullable().optional(),
});

/** A deactivated board is still shown (`active: false`), and deactivating it again answers it as it is. */
const NO_BOARD = 'not_found: the site has never had a share board (PUT creates one)';

/** The board as the API shows it, with its page views so far. */
const present = async (app: AppContext, row: ShareRow) => shareOut(row, await viewCounter(app.store).read('share', row.slug));

export default function shareRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'put', path: '/sites/{siteId}/share', summary: 'Create or update the public share board', tag: 'share',
    scope: 'settings:write', alsoScope: 'analytics:read', body: ShareBody, response: ShareOut,
    async handler({ app, site, body }) {
      const repo = new ShareRepo(app.store);
      const { label, max_range_days, expires_in_days, ...switches } = body;
      const panels = Object.fromEntries(Object.entries(switches).filter(([, v]) => v !== undefined)) as Partial<Panels>;
      const row = await repo.save(site, { panels, label, max_range_days, expires_in_days });
      return { data: await present(app, row) };
    },
  });

  r.route({
    // Its url opens the board's figures to whoever holds it: reading it needs analytics:read, as publishing does.
    method: 'get', path: '/sites/{siteId}/share', summary: 'The share board', tag: 'share', scope: 'settings:read', alsoScope: 'analytics:read',
    response: ShareOut, refusals: { 404: NO_BOARD },
    async handler({ app, site }) {
      const row = await new ShareRepo(app.store).get(site.id);
      if (!row) throw notFound('share board');
      return { data: await present(app, row) };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/share', summary: 'Deactivate the share board (a later PUT issues a new slug)',
    tag: 'share', scope: 'settings:write', response: ShareOut, refusals: { 404: NO_BOARD },
    async handler({ app, site }) {
      const off = await new ShareRepo(app.store).deactivate(site.id);
      if (!off) throw notFound('share board');
      return { data: await present(app, off) };
    },
  });
}
