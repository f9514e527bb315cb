import { z } from 'zod';
import { BACKFILL_STATES, IntegrationRepo, integrationOut } from '../../model/integrations';
import { connect, disconnect, resync } from '../../integrations/connections';
import { providerNamed } from '../../integrations/providers';
import { canReach } from '../auth';
import { PageMeta, Timestamp } from '../openapi';
import { pageArray, pagingQuery } from '../paging';
import { parseBody, type RouteRegistrar } from '../route';

/**
 * Provider connections, Stripe and Search Console (PRODUCT.md §5; spec "Integrations").
 * `revenue:write` connects, disconnects and re-syncs; `revenue:read` lists. Secrets go in and never
 * come back out: the answer says only whether a webhook secret is set.
 */
const IntegrationOut = z.object({
  site_id: z.string().uuid(),
  provider: z.string(),
  account: z.string().nullable().openapi({ description: 'search_console: the property; stripe: the key\'s mode, kind and last four characters ("live secret key ...4242"). Never a secret.' }),
  connected_at: Timestamp,
  webhook: z.object({ configured: z.boolean(), last_received_at: Timestamp.nullable() }),
  backfill: z.object({
    state: z.enum(BACKFILL_STATES),
    counts: z.record(z.string(), z.number().int()).openapi({
      description: 'What the import stored so far, by provider (stripe: payments, subscriptions; search_console: days, rows), and the pages read.',
    }),
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    error: z.string().nullable(),
  }),
});

/** Each provider's body is checked in the handler against its own schema (providers.ts), unknown fields refused. */
const ConnectBody = z.record(z.string(), z.unknown()).openapi({
  description: 'stripe: {secret_key, webhook_secret?}. search_console: {property, service_account} where service_account is the ' +
    'JSON key file of a Google service account added as a user of the Search Console property.',
});

const ResyncOut = z.object({ provider: z.string(), backfill: z.object({ state: z.enum(BACKFILL_STATES) }) });

const UNKNOWN_PROVIDER = 'not_found: there is no such provider (the message names the providers there are)';
const NOT_CONNECTED = `${UNKNOWN_PROVIDER}, or the site is not connected to it`;

export default function integrationRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'put', path: '/sites/{siteId}/integrations/{provider}', summary: 'Connect a provider: stripe or search_console (queues a full import)',
    tag: 'integrations', scope: 'revenue:write', body: ConnectBody, response: IntegrationOut,
    refusals: {
      404: UNKNOWN_PROVIDER,
      409: 'conflict: the site is connected to the other provider (a site holds one connection)',
      503: 'provider_unavailable: the provider could not be reached to check the credentials; see Retry-After',
    },
    async handler({ app, site, params, body }) {
      const provider = providerNamed(params.provider);
      const row = await connect(app, site.id, provider, parseBody(provider.connectBody, body));
      return { data: integrationOut(row), meta: { site_id: site.id } };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/integrations/{provider}', summary: 'Disconnect (imported data stays)',
    tag: 'integrations', scope: 'revenue:write', response: z.object({ provider: z.string(), deleted: z.literal(true) }),
    refusals: { 404: NOT_CONNECTED },
    async handler({ app, site, params }) {
      await disconnect(app.store, site.id, params.provider);
      return { data: { provider: params.provider, deleted: true }, meta: { site_id: site.id } };
    },
  });

  r.route({
    method: 'post', path: '/sites/{siteId}/integrations/{provider}/resync', summary: 'Clear what the provider imported and import it again from the beginning',
    tag: 'integrations', scope: 'revenue:write', response: ResyncOut, status: 202,
    refusals: {
      404: NOT_CONNECTED,
      409: 'credentials_refused: the provider refuses the stored credentials (revoked key, access withdrawn), so nothing was cleared',
      503: 'queue_unavailable: the job queue (Redis) is down, or provider_unavailable: the provider could not be reached; nothing was cleared; see Retry-After',
    },
    async handler({ app, site, params }) {
      const row = await resync(app, site.id, params.provider);
      return { data: { provider: row.provider, backfill: { state: row.backfill_state } }, meta: { site_id: site.id }, status: 202 };
    },
  });

  r.route({
    method: 'get', path: '/integrations', summary: 'Connections of the sites the key reaches, with backfill progress',
    tag: 'integrations', scope: 'revenue:read', query: pagingQuery, response: z.array(IntegrationOut), meta: { page: PageMeta },
    async handler({ app, principal, query }) {
      const sites = (await app.repos.listSites(principal.orgId)).filter((s) => canReach(principal, s));
      const rows = await new IntegrationRepo(app.store).list(sites.map((s) => s.id));
      return pageArray(rows.map(integrationOut), query);
    },
  });
}
