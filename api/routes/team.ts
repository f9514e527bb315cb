import { z } from 'zod';
import type { Principal } from '../../core/domain';
import { conflict, forbidden, invalidRequest, notFound } from '../../core/errors';
import { isUuid } from '../../core/ids';
import { PageMeta } from '../openapi';
import { pageArray, pagingQuery } from '../paging';
import type { RouteRegistrar } from '../route';

const Access = z.object({ user_id: z.string().uuid(), sites: z.array(z.string().uuid()).nullable() });
const Member = Access.extend({ email: z.string(), role: z.enum(['owner', 'admin', 'member']) });

const SiteAccessBody = z.strictObject({
  site_ids: z.array(z.string().uuid('site_ids entries must be uuids')).max(1000),
});

/**
 * A key confined to some sites cannot hand out access it does not have: it may confine a member to
 * sites within its own reach, never grant every site ([]), which would let a confined member widen
 * their own reach.
 */
function requireGrantable(p: Principal, ids: string[]): void {
  if (p.sites === 'all') return;
  const reach = p.sites;
  if (ids.length === 0 || ids.some((id) => !reach.has(id))) throw forbidden();
}

export default function teamRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'get', path: '/team', summary: 'Members of the organisation and their site access', tag: 'team',
    scope: 'team:read', query: pagingQuery, response: z.array(Member), meta: { page: PageMeta },
    async handler({ app, principal, query }) {
      const members = await app.repos.memberships.select('org_id = {o:UUID}', { o: principal.orgId }, 'ORDER BY created_at, user_id');
      const ids = members.map((m) => m.user_id);
      const users = new Map((await app.repos.users.select('id IN {ids:Array(UUID)}', { ids })).map((u) => [u.id, u]));
      const rows = members.map((m) => ({
        user_id: m.user_id, email: users.get(m.user_id)?.email ?? '', role: m.role, sites: m.all_sites ? null : m.site_ids,
      }));
      return pageArray(rows, query);
    },
  });

  r.route({
    method: 'patch', path: '/team/members/{userId}/sites', summary: 'Confine a member to sites, or [] for every site',
    tag: 'team', scope: 'team:write', body: SiteAccessBody, response: Access,
    refusals: { 409: 'last_owner: an owner reaches every site and cannot be scoped' },
    async handler({ app, principal, params, body }) {
      if (!isUuid(params.userId)) throw invalidRequest('userId: must be a uuid');
      const member = await app.repos.membership(principal.orgId, params.userId.toLowerCase());
      if (!member) throw notFound('team member');
      if (member.role === 'owner') throw conflict('last_owner', 'An owner always reaches every site and cannot be scoped.');
      const ids = [...new Set(body.site_ids.map((s) => s.toLowerCase()))];
      const own = new Set((await app.repos.listSites(principal.orgId)).map((s) => s.id));
      const foreign = ids.find((id) => !own.has(id));
      if (foreign) throw invalidRequest(`site_ids: "${foreign}" is not a site of this account`, { site_id: foreign });
      requireGrantable(principal, ids);
      await app.repos.memberships.put({ ...member, all_sites: ids.length ? 0 : 1, site_ids: ids });
      // meta is {} on this endpoint, as the spec says.
      return { data: { user_id: member.user_id, sites: ids.length ? ids : null }, meta: {} };
    },
  });
}
