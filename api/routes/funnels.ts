import { z } from 'zod';
import { label } from '../../core/fields';
import type { Site } from '../../core/domain';
import { FUNNEL_WINDOWS, FunnelsRepo, MATCH_OPS, funnelOut, stepsSchema, windowSecondsSchema, type Funnel } from '../../model/funnels';
import { rangeMeta, refineWindow, resolveWindow, spelledZone, windowShape, type ResolvedWindow } from '../../model/notes-window';
import { earliestDatum, siteGoals } from '../../query/context';
import { runFunnelReport } from '../../query/funnel-report';
import type { AppContext } from '../context';
import { PageMeta, RangeMeta, Timestamp } from '../openapi';
import { paged, pagingQuery } from '../paging';
import { byPathId, type RouteRegistrar } from '../route';

const StepOut = z.object({ kind: z.enum(['view', 'goal', 'payment']), match: z.enum(MATCH_OPS).optional(), value: z.string().optional() });
const FunnelOut = z.object({
  id: z.string().uuid(), name: z.string(), steps: z.array(StepOut), window_seconds: z.number().int(),
  created_at: Timestamp, updated_at: Timestamp,
});
const ReportOut = z.object({
  funnel_id: z.string().uuid(), name: z.string(), window_seconds: z.number().int(),
  steps: z.array(StepOut.extend({
    step: z.number().int(), visitors: z.number().int(), conversion_from_first: z.number(), conversion_from_previous: z.number(),
  })),
});

const name = label(200);

/** A union of number literals documents as `number`; the spec's values are whole seconds. */
const windowSeconds = windowSecondsSchema.openapi({ type: 'integer', enum: [...FUNNEL_WINDOWS] });
const CreateFunnel = z.strictObject({ name, steps: stepsSchema, window_seconds: windowSeconds.default(86400) });
const EditFunnel = z
  .strictObject({ name: name.optional(), steps: stepsSchema.optional(), window_seconds: windowSeconds.optional() })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, steps, window_seconds');

const ReportQuery = z.object(windowShape).superRefine(refineWindow);

const findFunnel = (app: AppContext, site: Site, funnelId: string) =>
  byPathId(funnelId, 'funnel', (id) => new FunnelsRepo(app.store).get(site.id, id));

export default function funnelsRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'get', path: '/sites/{siteId}/funnels', summary: 'Funnels of the site', tag: 'funnels', scope: 'funnels:read',
    query: pagingQuery, response: z.array(FunnelOut), meta: { page: PageMeta },
    async handler({ app, site, query }) {
      return paged((await new FunnelsRepo(app.store).list(site.id, query)).map(funnelOut), query);
    },
  });

  r.route({
    method: 'post', path: '/sites/{siteId}/funnels', summary: 'Create a funnel', tag: 'funnels', scope: 'funnels:write', status: 201,
    body: CreateFunnel, response: FunnelOut,
    async handler({ app, site, body }) {
      return { data: funnelOut(await new FunnelsRepo(app.store).create(site.id, body)) };
    },
  });

  r.route({
    method: 'get', path: '/sites/{siteId}/funnels/{funnelId}', summary: 'One funnel', tag: 'funnels', scope: 'funnels:read',
    response: FunnelOut,
    async handler({ app, site, params }) {
      return { data: funnelOut(await findFunnel(app, site, params.funnelId)) };
    },
  });

  r.route({
    method: 'patch', path: '/sites/{siteId}/funnels/{funnelId}', summary: 'Edit a funnel (changes its past figures)',
    tag: 'funnels', scope: 'funnels:write', body: EditFunnel, response: FunnelOut,
    async handler({ app, site, params, body }) {
      const saved = await byPathId(params.funnelId, 'funnel', (id) => new FunnelsRepo(app.store).update(site.id, id, body));
      return { data: funnelOut(saved) };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/funnels/{funnelId}', summary: 'Delete a funnel', tag: 'funnels', scope: 'funnels:write',
    response: z.object({ id: z.string().uuid(), deleted: z.literal(true) }),
    async handler({ app, site, params }) {
      await byPathId(params.funnelId, 'funnel', (id) => new FunnelsRepo(app.store).remove(site.id, id));
      return { data: { id: params.funnelId, deleted: true } };
    },
  });

  r.route({
    method: 'get', path: '/sites/{siteId}/funnels/{funnelId}/report',
    summary: 'Visitors per funnel step with conversion from the first and the previous step', tag: 'funnels',
    // Figures need analytics:read as every report does (docs/AUTH.md); the funnel it reports on, funnels:read.
    scope: 'analytics:read', alsoScope: 'funnels:read', query: ReportQuery, response: ReportOut, meta: { range: RangeMeta },
    async handler({ app, principal, site, params, query: asked }) {
      const query = await spelledZone(app.store, asked);
      const funnel = funnelOut(await findFunnel(app, site, params.funnelId));
      // No datum at all: `all` starts at today's midnight, as the analytics reports' does.
      const earliest = query.period === 'all' ? await earliestDatum(app.store, site.id, query.tz) : null;
      const window = resolveWindow(query, 'last30d', principal.retentionDays, earliest);
      const data = await funnelReportFor(app, site, funnel, window, query.bots === 'included');
      return { data, meta: { range: rangeMeta(window) } };
    },
  });
}

/** The report over a resolved window; the share board's funnel panel uses it too. */
export async function funnelReportFor(app: AppContext, site: Site, funnel: Funnel, window: ResolvedWindow, includeBots: boolean) {
  const results = await runFunnelReport(app.store, {
    siteId: site.id, steps: funnel.steps, windowSeconds: funnel.window_seconds, fromMs: window.fromMs, toMs: window.toMs,
    includeBots, goals: await siteGoals(app.store, site.id),
  });
  const steps = funnel.steps.map((s, i) => ({ ...s, ...results[i] }));
  return { funnel_id: funnel.id, name: funnel.name, window_seconds: funnel.window_seconds, steps };
}
