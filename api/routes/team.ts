import { z } from 'zod';
import type { Principal, Role } from '../../core/domain';
import { AppError, conflict, forbidden, invalidRequest } from '../../core/errors';
import type { AppContext } from '../context';
import { PageMeta } from '../openapi';
import { pageArray, pagingQuery } from '../paging';
import { byPathId, type RouteRegistrar } from '../route';

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

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

/**
 * Site access is set from above: an owner sets an admin's or a member's, an admin a member's. A
 * member holding `team:write` sets nobody's, and nobody sets their own or a peer's: a member once
 * confined an admin, whose own keys were then confined too and could not undo it.
 */
async function requireOutranks(app: AppContext, p: Principal, target: Role): Promise<void> {
  const caller = await app.repos.membership(p.orgId, p.userId);
  if (!caller || RANK[caller.role] <= RANK[target]) {
    throw new AppError(403, 'forbidden', `Only a member of a higher role may set ${/^[aeiou]/.test(target) ? 'an' : 'a'} ${target}'s site access (owner > admin > member).`);
  }
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
      // The member is read and written in the team's turn: read before a removal and written after
      // it, the whole row brought the removed member back.
      const data = await app.repos.inTeamTurn(principal.orgId, async () => {
        const member = await byPathId(params.userId, 'team member', (id) => app.repos.membership(principal.orgId, id.toLowerCase()));
        if (member.role === 'owner') throw conflict('last_owner', 'An owner always reaches every site and cannot be scoped.');
        await requireOutranks(app, principal, member.role);
        const ids = [...new Set(body.site_ids.map((s) => s.toLowerCase()))];
        const own = new Set((await app.repos.listSites(principal.orgId)).map((s) => s.id));
        const foreign = ids.find((id) => !own.has(id));
        if (foreign) throw invalidRequest(`site_ids: "${foreign}" is not a site of this account`, { site_id: foreign });
        requireGrantable(principal, ids);
        await app.repos.memberships.put({ ...member, all_sites: ids.length ? 0 : 1, site_ids: ids });
        return { user_id: member.user_id, sites: ids.length ? ids : null };
      });
      // meta is {} on this endpoint, as the spec says.
      return { data, meta: {} };
    },
  });
}
