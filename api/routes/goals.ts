import { z } from 'zod';
import { withLeadingSlash } from '../../core/glob';
import { invalidRequest, notFound } from '../../core/errors';
import { isUuid } from '../../core/ids';
import { BUILTIN_EVENTS, GoalsRepo } from '../../model/goals';
import { requireSite } from '../auth';
import { PageMeta, Timestamp } from '../openapi';
import { pageArray, pagingQuery } from '../paging';
import type { RouteRegistrar } from '../route';
import { label, text, verbatim } from '../../core/fields';

/**
 * Goals (PRODUCT.md §5): `event` goals name a custom event, `page` goals a path glob evaluated at
 * read time. `revenue_signal` nominates the goals reports count.
 */
const GoalOut = z.object({
  id: z.string().uuid(), site_id: z.string().uuid(), name: z.string(), kind: z.enum(['event', 'page']),
  event_name: z.string().nullable(), path_pattern: z.string().nullable(), revenue_signal: z.boolean(),
  created_at: Timestamp, updated_at: Timestamp,
});

const CreateGoal = z.strictObject({
  site_id: z.string().uuid('must be a site uuid'),
  // A funnel's goal step names a goal or a sent event; these three name the tracker's own events, so a goal
  // under one of them could never be a step.
  name: label(120).refine((n) => !BUILTIN_EVENTS.includes(n), 'must not be pageview, exit_link or file_download (the tracker\'s own events)'),
  kind: z.enum(['event', 'page']),
  event_name: verbatim(200)
    .refine((n) => !BUILTIN_EVENTS.includes(n), 'must be a custom event name, not pageview, exit_link or file_download').optional(),
  path_pattern: text(500).transform(withLeadingSlash).optional(),
  revenue_signal: z.boolean().optional(),
});

function checkKind(body: z.infer<typeof CreateGoal>): void {
  if (body.kind === 'event') {
    if (!body.event_name) throw invalidRequest('event_name: is required for an event goal');
    if (body.path_pattern !== undefined) throw invalidRequest('path_pattern: only page goals take a path pattern');
  } else {
    if (!body.path_pattern) throw invalidRequest('path_pattern: is required for a page goal');
    if (body.event_name !== undefined) throw invalidRequest('event_name: only event goals take an event name');
  }
}

export default function goalRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'post', path: '/goals', summary: 'Define a goal on a site', tag: 'goals', scope: 'goals:write', status: 201,
    refusals: { 409: 'conflict: the site already has a goal of that name (case-insensitive)' },
    body: CreateGoal, response: GoalOut, meta: { site_id: z.string().uuid() },
    async handler({ app, principal, body }) {
      const site = await requireSite(app.repos, principal, body.site_id);
      checkKind(body);
      const goal = await new GoalsRepo(app.store).create({ ...body, site_id: site.id });
      return { data: goal, meta: { site_id: site.id } };
    },
  });

  r.route({
    method: 'get', path: '/sites/{siteId}/goals', summary: 'Goals of a site', tag: 'goals', scope: 'goals:read',
    query: pagingQuery, response: z.array(GoalOut), meta: { page: PageMeta },
    async handler({ app, site, query }) {
      return pageArray(await new GoalsRepo(app.store).list(site.id), query);
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/goals/{goalId}', summary: 'Delete a goal', tag: 'goals', scope: 'goals:write',
    response: z.object({ id: z.string().uuid(), deleted: z.boolean() }),
    async handler({ app, site, params }) {
      const goals = new GoalsRepo(app.store);
      const goal = isUuid(params.goalId) ? await goals.get(site.id, params.goalId) : undefined;
      if (!goal) throw notFound('goal');
      await goals.remove(goal);
      return { data: { id: goal.id, deleted: true } };
    },
  });
}
