import { z } from 'zod';
import { BACKFILL_STATES, IntegrationRepo, integrationOut } from '../../model/integrations';
import { connect, disconnect, resync } from '../../integrations/connections';
import { canReach } from '../auth';
import { pageArray, pagingQuery } from '../paging';
import type { RouteRegistrar } from '../route';

/**
 * Payment provider connections (PRODUCT.md §5; spec "Integrations"). `revenue:write` connects,
 * disconnects and re-syncs; `revenue:read` lists. Secrets go in and never come back out: the
 * answer says only whether a webhook secret is set.
 */
const IntegrationOut = z.object({
  site_id: z.string().uuid(),
  provider: z.string(),
  connected_at: z.string(),
  webhook: z.object({ configured: z.boolean(), last_received_at: z.string().nullable() }),
  backfill: z.object({
    state: z.enum(BACKFILL_STATES),
    counts: z.object({ payments: z.number().int(), subscriptions: z.number().int(), pages: z.number().int() }),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    error: z.string().nullable(),
  }),
});

const ConnectBody = z.strictObject({
  secret_key: z.string({ error: 'is required: a Stripe secret key (sk_...) or restricted key (rk_...)' })
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/, { error: 'must be a Stripe secret key (sk_live_..., sk_test_...) or restricted key (rk_...)' }),
  webhook_secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]{8,}$/, { error: 'must be the endpoint signing secret Stripe shows (whsec_...)' }).optional(),
});

const ResyncOut = z.object({ provider: z.string(), backfill: z.object({ state: z.enum(BACKFILL_STATES) }) });

export default function integrationRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'put', path: '/sites/{siteId}/integrations/{provider}', summary: 'Connect a payment provider (queues a full import)',
    tag: 'integrations', scope: 'revenue:write', body: ConnectBody, response: IntegrationOut,
    async handler({ app, site, params, body }) {
      const row = await connect(app, site.id, params.provider, body);
      return { data: integrationOut(row), meta: { site_id: site.id } };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/integrations/{provider}', summary: 'Disconnect (stored payments stay)',
    tag: 'integrations', scope: 'revenue:write', response: z.object({ provider: z.string(), deleted: z.literal(true) }),
    async handler({ app, site, params }) {
      await disconnect(app.store, site.id, params.provider);
      return { data: { provider: params.provider, deleted: true }, meta: { site_id: site.id } };
    },
  });

  r.route({
    method: 'post', path: '/sites/{siteId}/integrations/{provider}/resync', summary: 'Clear stored payments and re-import them from the beginning',
    tag: 'integrations', scope: 'revenue:write', response: ResyncOut, status: 202,
    async handler({ app, site, params }) {
      const row = await resync(app, site.id, params.provider);
      return { data: { provider: row.provider, backfill: { state: row.backfill_state } }, meta: { site_id: site.id }, status: 202 };
    },
  });

  r.route({
    method: 'get', path: '/integrations', summary: 'Connections of the sites the key reaches, with backfill progress',
    tag: 'integrations', scope: 'revenue:read', query: pagingQuery, response: z.array(IntegrationOut),
    async handler({ app, principal, query }) {
      const sites = (await app.repos.listSites(principal.orgId)).filter((s) => canReach(principal, s));
      const rows = await new IntegrationRepo(app.store).list(sites.map((s) => s.id));
      return pageArray(rows.map(integrationOut), query);
    },
  });
}
