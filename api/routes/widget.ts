import { z } from 'zod';
import { notFound } from '../../core/errors';
import { viewCounter } from '../../model/share-views';
import { CHART_STYLES, WIDGET_METRICS, WIDGET_TYPES, WidgetRepo, widgetOut, type WidgetRow } from '../../model/widget';
import type { AppContext } from '../context';
import type { RouteRegistrar } from '../route';
import { Timestamp } from '../openapi';

const WidgetOut = z.object({
  url: z.string(), slug: z.string(), type: z.enum(WIDGET_TYPES), metric: z.enum(WIDGET_METRICS), enabled: z.boolean(),
  chart_style: z.enum(CHART_STYLES), publish_revenue: z.boolean(), created_at: Timestamp, updated_at: Timestamp,
  view_count: z.number().int(),
});

const oneOf = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` }).optional();
const WidgetBody = z.strictObject({
  type: oneOf(WIDGET_TYPES),
  metric: oneOf(WIDGET_METRICS),
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
  chart_style: oneOf(CHART_STYLES),
  publish_revenue: z.boolean({ error: 'must be true or false' }).optional(),
});

const NO_WIDGET = 'not_found: the site has no widget (PUT creates one)';

/** The widget as the API shows it, with its card views so far. */
const present = async (app: AppContext, row: WidgetRow) => widgetOut(row, await viewCounter(app.store).read('widget', row.slug));

export default function widgetRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'put', path: '/sites/{siteId}/widget', summary: 'Create or update the embeddable widget (starts off)',
    tag: 'widget', scope: 'settings:write', alsoScope: 'analytics:read', body: WidgetBody, response: WidgetOut,
    refusals: { 409: 'no_events: switching on needs at least one recorded event' },
    async handler({ app, site, body }) {
      const repo = new WidgetRepo(app.store);
      const row = await repo.save(site.id, body);
      return { data: await present(app, row) };
    },
  });

  r.route({
    // Its url opens the card's figures to whoever holds it: reading it needs analytics:read, as publishing does.
    method: 'get', path: '/sites/{siteId}/widget', summary: 'The embeddable widget', tag: 'widget', scope: 'settings:read', alsoScope: 'analytics:read',
    response: WidgetOut, refusals: { 404: NO_WIDGET },
    async handler({ app, site }) {
      const row = await new WidgetRepo(app.store).get(site.id);
      if (!row) throw notFound('widget');
      return { data: await present(app, row) };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/widget', summary: 'Delete the widget: its card answers 404 and a later PUT issues a new slug',
    tag: 'widget', scope: 'settings:write', response: z.object({ slug: z.string(), deleted: z.literal(true) }), refusals: { 404: NO_WIDGET },
    async handler({ app, site }) {
      const row = await new WidgetRepo(app.store).remove(site.id);
      if (!row) throw notFound('widget');
      return { data: { slug: row.slug, deleted: true as const } };
    },
  });
}
