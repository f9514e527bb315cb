import { randomUUID } from 'node:crypto';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/** GET /team and PATCH /team/members/{userId}/sites: every rule of the spec. */
let svc: TestService;
let t: Tenant;
let member: string;
let admin: string;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ sites: 3, scopes: ['team:write'] });
  member = (await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'Member@Example.com', role: 'member' })).id;
  admin = (await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'admin@example.com', role: 'admin' })).id;
});
afterAll(() => svc.stop());

const access = (userId: string, body: unknown, token = t.token) =>
  svc.api('PATCH', `/team/members/${userId}/sites`, { token, body });

test('GET /team lists every member with role and site access, paged', async () => {
  const res = await svc.api('GET', '/team', { token: t.token });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([
    { user_id: t.userId, email: expect.stringMatching(/^owner-/), role: 'owner', sites: null },
    { user_id: member, email: 'member@example.com', role: 'member', sites: null },
    { user_id: admin, email: 'admin@example.com', role: 'admin', sites: null },
  ]);
  expect(res.body.meta).toEqual({ page: { limit: 100, offset: 0, has_more: false } });
  const page = await svc.api('GET', '/team?limit=2&offset=1', { token: t.token });
  expect(page.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([member, admin]);
  expect(page.body.meta.page).toEqual({ limit: 2, offset: 1, has_more: false });
  const first = await svc.api('GET', '/team?limit=2', { token: t.token });
  expect(first.body.meta.page.has_more).toBe(true);
});

test('a non-empty list confines the member, duplicates collapsed; meta is {}', async () => {
  const [s1, s2] = t.siteIds;
  const res = await access(member, { site_ids: [s1, s2, s1, s2.toUpperCase()] });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ data: { user_id: member, sites: [s1, s2] }, meta: {} });
  const team = await svc.api('GET', '/team', { token: t.token });
  expect(team.body.data.find((m: { user_id: string }) => m.user_id === member).sites).toEqual([s1, s2]);
});

test('[] removes the restriction: 200 with sites null, and every site is reachable again', async () => {
  const [s1, , s3] = t.siteIds;
  await access(member, { site_ids: [s1] });
  const key = await t.key({ userId: member });
  expect((await svc.api('GET', '/sites', { token: key.token })).body.data).toHaveLength(1);
  const res = await access(member, { site_ids: [] });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ data: { user_id: member, sites: null }, meta: {} });
  const sites = (await svc.api('GET', '/sites', { token: key.token })).body.data.map((s: { id: string }) => s.id);
  expect(sites).toContain(s3);
  expect(sites).toHaveLength(3);
});

test('a site id of another account, or one that does not exist, is a 400 naming it', async () => {
  const other = await svc.tenant();
  const ghost = randomUUID();
  for (const id of [other.siteId, ghost]) {
    const res = await access(member, { site_ids: [t.siteIds[0], id] });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: expect.stringContaining(id), details: { site_id: id, issues: [{ path: 'site_ids', message: expect.stringContaining(id) }] } });
  }
  // A missing or mistyped list says so in the service's words ("Invalid input: expected array, received undefined").
  expect((await access(member, {})).body.error.message).toBe('site_ids: is required');
  expect((await access(member, { site_ids: 'x' })).body.error.message).toBe('site_ids: must be an array');
  // Nothing changed.
  const team = await svc.api('GET', '/team', { token: t.token });
  expect(team.body.data.find((m: { user_id: string }) => m.user_id === member).sites).toBeNull();
});

test('an owner is never scoped: 409 last_owner, with a list or with []', async () => {
  for (const site_ids of [[t.siteIds[0]], []]) {
    const res = await access(t.userId, { site_ids });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('last_owner');
  }
});

test.each([
  [{}, /^site_ids: /],
  [{ site_ids: 'x' }, /^site_ids: /],
  [{ site_ids: ['nope'] }, /^site_ids\.0: site_ids entries must be uuids/],
  [{ site_ids: [], sites: [] }, /^body: unexpected field\(s\) "sites"/],
])('%j is a 400 naming the field', async (body, message) => {
  const res = await access(member, body);
  expect(res.status).toBe(400);
  expect(res.body.error.message).toMatch(message);
});

test('a user id that is not a uuid, an unknown member or one of another organisation is a 404, as every path id', async () => {
  expect((await access('nope', { site_ids: [] })).status).toBe(404);
  expect((await access(randomUUID(), { site_ids: [] })).body.error.code).toBe('not_found');
  const other = await svc.tenant();
  expect((await access(other.userId, { site_ids: [] })).status).toBe(404);
});

test('team:read reads, team:write is needed to change access', async () => {
  const reader = await t.key({ scopes: ['team:read'] });
  expect((await svc.api('GET', '/team', { token: reader.token })).status).toBe(200);
  expect((await access(member, { site_ids: [] }, reader.token)).status).toBe(403);
  const none = await t.key({ scopes: ['sites:read'] });
  expect((await svc.api('GET', '/team', { token: none.token })).status).toBe(403);
});

test('a key confined to sites may confine members within its reach, never grant more', async () => {
  const [s1, s2] = t.siteIds;
  const confined = await t.key({ scopes: ['team:write'], sites: [s1] });
  expect((await access(admin, { site_ids: [s1] }, confined.token)).status).toBe(200);
  const wider = await access(admin, { site_ids: [s1, s2] }, confined.token);
  expect(wider.status).toBe(403);
  const everything = await access(admin, { site_ids: [] }, confined.token);
  expect(everything.status).toBe(403);
  expect(everything.body.error.code).toBe('forbidden');
});

test('access is set from above: owner over admin and member, admin over member; a member sets nobody, nobody a peer', async () => {
  const [s1] = t.siteIds;
  const peer = (await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'second-admin@example.com', role: 'admin' })).id;
  const asMember = await t.key({ scopes: ['team:write'], userId: member });
  const asAdmin = await t.key({ scopes: ['team:write'], userId: admin });
  const sitesOf = async (id: string) => (await svc.api('GET', '/team', { token: t.token })).body.data.find((m: { user_id: string }) => m.user_id === id).sites;
  await access(admin, { site_ids: [] });
  const refused = await access(admin, { site_ids: [s1] }, asMember.token);
  expect(refused.status).toBe(403);
  expect(refused.body.error).toEqual({ code: 'forbidden', message: "Only a member of a higher role may set an admin's site access (owner > admin > member)." });
  expect((await access(member, { site_ids: [s1] }, asMember.token)).status).toBe(403); // not even themselves
  expect((await access(peer, { site_ids: [s1] }, asAdmin.token)).status).toBe(403);
  expect((await access(admin, { site_ids: [s1] }, asAdmin.token)).status).toBe(403);
  // Nothing changed by the refusals: the admin still reaches every site.
  expect(await sitesOf(admin)).toBeNull();
  expect(await sitesOf(peer)).toBeNull();
  expect((await access(member, { site_ids: [s1] }, asAdmin.token)).body.data).toEqual({ user_id: member, sites: [s1] });
  expect((await access(member, { site_ids: [] }, asAdmin.token)).status).toBe(200);
  expect((await access(peer, { site_ids: [s1] })).status).toBe(200); // the owner's key
  expect((await access(peer, { site_ids: [] })).status).toBe(200);
  // An owner stays 409 last_owner whoever asks.
  expect((await access(t.userId, { site_ids: [s1] }, asMember.token)).status).toBe(409);
});

test('a member removed while their site access is being set stays removed, and no key can be made for them', async () => {
  const [s1] = t.siteIds;
  // Many rounds: the removal must land between the PATCH's read and its write to show the race.
  for (let round = 0; round < 6; round++) {
    const leaver = (await svc.admin<{ id: string }>('user create', { org: t.orgId, email: `leaver-${round}@example.com`, role: 'member' })).id;
    const [patched, removed] = await Promise.allSettled([
      access(leaver, { site_ids: round % 2 ? [] : [s1] }),
      svc.admin('user remove', { org: t.orgId, user: leaver }),
    ]);
    expect(removed).toEqual({ status: 'fulfilled', value: { id: leaver, removed: true } });
    // The PATCH either ran first (200, then removed) or found nobody (404): never a member brought back.
    expect([200, 404]).toContain(patched.status === 'fulfilled' ? patched.value.status : 0);
    const team = (await svc.api('GET', '/team', { token: t.token })).body.data.map((m: { user_id: string }) => m.user_id);
    expect(team).not.toContain(leaver);
    await expect(svc.admin('key create', { org: t.orgId, user: leaver })).rejects.toMatchObject({ status: 400 });
  }
});

test('two owners removed at once: one is removed, the other is kept as the last owner', async () => {
  const other = await svc.tenant();
  const second = (await svc.admin<{ id: string }>('user create', { org: other.orgId, email: 'co-owner@example.com', role: 'owner' })).id;
  const results = await Promise.allSettled([
    svc.admin('user remove', { org: other.orgId, user: other.userId }),
    svc.admin('user remove', { org: other.orgId, user: second }),
  ]);
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { status: 409, code: 'last_owner' } });
});

test('concurrent user create of one email makes one member; the others are 409 conflict', async () => {
  const other = await svc.tenant({ scopes: ['team:read'] });
  const results = await Promise.allSettled(Array.from({ length: 5 }, () =>
    svc.admin('user create', { org: other.orgId, email: 'Same@Example.com', role: 'member' })));
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of results.filter((x) => x.status === 'rejected')) expect(r).toMatchObject({ reason: { status: 409, code: 'conflict' } });
  const team = (await svc.api('GET', '/team', { token: other.token })).body.data as { email: string }[];
  expect(team.filter((m) => m.email === 'same@example.com')).toHaveLength(1);
});
