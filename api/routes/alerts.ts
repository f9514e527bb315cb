import { z } from 'zod';
import { label, prose, typeError, verbatim } from '../../core/fields';
import type { Site } from '../../core/domain';
import { conflict, invalidRequest } from '../../core/errors';
import { AlertsRepo, alertOut, firingOut, type AlertRow } from '../../model/alerts';
import { THRESHOLD_MODES, TRIGGERS, TRIGGER_TYPES } from '../../model/alerts-rules';
import type { AppContext } from '../context';
import { PageMeta, Timestamp } from '../openapi';
import { paged, pagingQuery } from '../paging';
import { byPathId, type RouteRegistrar } from '../route';

const AlertOut = z.object({
  id: z.string().uuid(), name: z.string(), enabled: z.boolean(), trigger_type: z.enum(TRIGGER_TYPES),
  goal_name: z.string().nullable(), threshold_mode: z.enum(THRESHOLD_MODES), threshold: z.number(),
  subject: z.string(), body: z.string().nullable(), created_by: z.string().uuid(),
  created_at: Timestamp, updated_at: Timestamp, last_fired_at: Timestamp.nullable(),
});
const FiringOut = z.object({ id: z.string().uuid(), alert_id: z.string().uuid(), fired_at: Timestamp, value: z.number(), threshold: z.number() });

const fields = {
  name: label(200),
  enabled: z.boolean({ error: 'must be true or false' }),
  trigger_type: z.enum(TRIGGER_TYPES, { error: `must be one of ${TRIGGER_TYPES.join(', ')}` }),
  // Names the goal or sent event as collected: kept as given (ingest keeps event names as sent).
  goal_name: verbatim(200).nullable(),
  threshold_mode: z.enum(THRESHOLD_MODES, { error: `must be one of ${THRESHOLD_MODES.join(', ')}` }),
  threshold: z.number(typeError('a number')).positive('must be greater than 0').max(1e12, 'must be at most 1000000000000'),
  window_minutes: z.number(typeError('a whole number of minutes')).int('must be a whole number of minutes')
    .min(1, 'must be from 1 to 10080 minutes').max(10_080, 'must be from 1 to 10080 minutes'),
  subject: label(200),
  body: prose(z.string(typeError('a string or null')).max(5000, 'allows at most 5000 characters')).nullable(),
};

const CreateAlert = z.strictObject({
  ...fields,
  enabled: fields.enabled.default(true),
  goal_name: fields.goal_name.optional(),
  threshold_mode: fields.threshold_mode.default('absolute'),
  window_minutes: fields.window_minutes.default(60),
  subject: fields.subject.optional(),
  body: fields.body.default(null),
});
const EditAlert = z
  .strictObject(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]> })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change');

/**
 * Every enabled alert of every site is measured each minute, one after another: a site holds at most
 * this many, so one tenant cannot stretch every organisation's evaluation run (600 alerts made in six
 * seconds took a run to 95 s and skipped a minute for all).
 */
const MAX_ALERTS_PER_SITE = 50;
const SITE_FULL = `the site already has ${MAX_ALERTS_PER_SITE} alerts, the most a site holds: delete one first`;

/** The rules between fields, checked on the alert as created or as a PATCH leaves it. */
function checkAlert(row: Pick<AlertRow, 'trigger_type' | 'goal_name' | 'threshold_mode' | 'threshold'>, given: string | null | undefined): string | null {
  if (row.threshold_mode === 'percent_change' && TRIGGERS[row.trigger_type].direction === 'down' && row.threshold > 100) {
    throw invalidRequest(`threshold: a fall is at most 100 percent, so ${row.threshold} could never be reached`);
  }
  return checkGoal(row, given);
}

/** goal_name is required by a goal trigger and meaningless for the others. */
function checkGoal(row: Pick<AlertRow, 'trigger_type' | 'goal_name'>, given: string | null | undefined): string | null {
  if (TRIGGERS[row.trigger_type].needsGoal) {
    if (!row.goal_name) throw invalidRequest('goal_name: is required when trigger_type is goal');
    return row.goal_name;
  }
  if (given) throw invalidRequest(`goal_name: only applies when trigger_type is goal, not ${row.trigger_type}`);
  return null;
}

const findAlert = (app: AppContext, site: Site, alertId: string) =>
  byPathId(alertId, 'alert', (id) => new AlertsRepo(app.store).get(site.id, id));

async function withState(repo: AlertsRepo, rows: AlertRow[]) {
  const states = await repo.states(rows.map((r) => r.id));
  return rows.map((r) => alertOut(r, states.get(r.id)));
}

export default function alertsRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'get', path: '/sites/{siteId}/alerts', summary: 'Alerts of the site', tag: 'alerts', scope: 'alerts:read',
    query: pagingQuery, response: z.array(AlertOut), meta: { page: PageMeta },
    async handler({ app, site, query }) {
      const repo = new AlertsRepo(app.store);
      return paged(await withState(repo, await repo.list(site.id, query)), query);
    },
  });

  r.route({
    method: 'post', path: '/sites/{siteId}/alerts', summary: 'Create an alert', tag: 'alerts', scope: 'alerts:write', status: 201,
    body: CreateAlert, response: AlertOut,
    refusals: { 409: `conflict: ${SITE_FULL}` },
    async handler({ app, principal, site, body }) {
      const goal_name = checkAlert({ ...body, goal_name: body.goal_name ?? null }, body.goal_name);
      const repo = new AlertsRepo(app.store);
      const row = await repo.create(site.id, { ...body, goal_name, subject: body.subject ?? body.name }, principal.userId, MAX_ALERTS_PER_SITE);
      if (!row) throw conflict('conflict', SITE_FULL);
      return { data: alertOut(row) };
    },
  });

  r.route({
    method: 'get', path: '/sites/{siteId}/alerts/{alertId}', summary: 'One alert', tag: 'alerts', scope: 'alerts:read',
    response: AlertOut,
    async handler({ app, site, params }) {
      const repo = new AlertsRepo(app.store);
      return { data: (await withState(repo, [await findAlert(app, site, params.alertId)]))[0] };
    },
  });

  r.route({
    method: 'patch', path: '/sites/{siteId}/alerts/{alertId}', summary: 'Edit an alert', tag: 'alerts', scope: 'alerts:write',
    body: EditAlert, response: AlertOut,
    async handler({ app, site, params, body }) {
      const repo = new AlertsRepo(app.store);
      const { enabled, ...rest } = body;
      const saved = await byPathId(params.alertId, 'alert', (id) => repo.update(site.id, id, (row) => {
        const next: AlertRow = { ...row, ...stripUndefined(rest), ...(enabled !== undefined ? { enabled: enabled ? 1 : 0 } : {}) };
        return { ...next, goal_name: checkAlert(next, body.goal_name) };
      }));
      return { data: (await withState(repo, [saved]))[0] };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/alerts/{alertId}', summary: 'Delete an alert', tag: 'alerts', scope: 'alerts:write',
    response: z.object({ id: z.string().uuid(), deleted: z.literal(true) }),
    async handler({ app, site, params }) {
      await byPathId(params.alertId, 'alert', (id) => new AlertsRepo(app.store).remove(site.id, id));
      return { data: { id: params.alertId, deleted: true } };
    },
  });

  r.route({
    method: 'get', path: '/sites/{siteId}/alerts/{alertId}/firings', summary: 'When the alert fired, newest first',
    // A firing carries the figure measured (visitors, revenue, ...): reading it needs analytics:read too.
    tag: 'alerts', scope: 'alerts:read', alsoScope: 'analytics:read', query: pagingQuery, response: z.array(FiringOut), meta: { page: PageMeta },
    async handler({ app, site, params, query }) {
      const alert = await findAlert(app, site, params.alertId);
      return paged((await new AlertsRepo(app.store).firings(site.id, alert.id, query)).map(firingOut), query);
    },
  });
}

const stripUndefined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
