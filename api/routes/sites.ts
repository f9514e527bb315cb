import { z } from 'zod';
import { isValidTimeZone } from '../../core/time';
import type { Site } from '../../core/domain';
import { canReach } from '../auth';
import { PageMeta, Timestamp } from '../openapi';
import { pageArray, pagingQuery } from '../paging';
import type { RouteRegistrar } from '../route';
import { DOMAIN_TAKEN, currencySchema, hostnameSchema, settingsResponse, settingsRoutes } from './settings';
import { siteZone } from '../../query/context';
import { label } from '../../core/fields';

const SiteOut = z.object({
  id: z.string().uuid(), domain: z.string(), name: z.string(), timezone: z.string(), currency: z.string(),
  active: z.boolean(), created_at: Timestamp,
});

export const siteOut = (s: Site) => ({
  id: s.id, domain: s.domain, name: s.name, timezone: s.timezone, currency: s.currency, active: s.active, created_at: s.created_at,
});

const CreateSite = z.strictObject({
  domain: hostnameSchema,
  name: label(200).optional(),
  timezone: z.string().refine(isValidTimeZone, 'unknown IANA timezone').optional(),
  currency: currencySchema.optional(),
});

export default function sitesRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'get', path: '/sites', summary: 'Sites the key reaches', tag: 'sites',
    query: pagingQuery, response: z.array(SiteOut), meta: { page: PageMeta },
    async handler({ app, principal, query }) {
      const sites = (await app.repos.listSites(principal.orgId)).filter((s) => canReach(principal, s));
      return pageArray(sites.map(siteOut), query);
    },
  });

  r.route({
    method: 'post', path: '/sites', summary: 'Create a site', tag: 'sites', scope: 'sites:write', status: 201,
    // A key confined on purpose (its own --sites, or its holder's site access) could add org-wide
    // sites it then cannot see, and the API deletes none: creating sites needs every site's reach.
    everySite: { refusal: 'This key reaches named sites only; creating a site needs a key that reaches every site.' },
    body: CreateSite, response: SiteOut, meta: { site_id: z.string().uuid() },
    refusals: { 403: 'forbidden: the key (or its holder) is confined to named sites', 409: DOMAIN_TAKEN },
    async handler({ app, principal, body }) {
      const site = await app.repos.createSite({ org_id: principal.orgId, ...body, timezone: await siteZone(app.store, body.timezone) });
      return { data: siteOut(site), meta: { site_id: site.id } };
    },
  });

  settingsRoutes(r, settingsResponse);
}
