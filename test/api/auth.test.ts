import { createHash } from 'node:crypto';
import { setClock } from '../../core/clock';
import { ALL_SCOPES } from '../../core/domain';
import { startTestService, type Tenant, type TestService } from '../support/harness';

/** Key lifecycle: every change takes effect on the very next request, cached principals or not. */
let svc: TestService;
let t: Tenant;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ sites: 2, scopes: [...ALL_SCOPES] });
});
afterAll(() => svc.stop());
afterEach(() => setClock(null));

const sitesOf = async (token: string) => {
  const res = await svc.api('GET', '/sites', { token });
  return res.status === 200 ? res.body.data.map((s: { id: string }) => s.id).sort() : res.status;
};
const settings = (token: string, site: string) => svc.api('GET', `/sites/${site}/settings`, { token });

test('a new key gets analytics:read alone; a write scope brings its read scope', async () => {
  const plain = await svc.admin('key create', { org: t.orgId, user: t.userId });
  expect(plain).toEqual({ id: expect.any(String), token: expect.stringMatching(/^tly_[0-9A-Za-z]{36}$/), scopes: ['analytics:read'], sites: null, expires_at: null });
  expect((await settings(plain.token, t.siteId)).status).toBe(403);

  const writer = await svc.admin('key create', { org: t.orgId, user: t.userId, scopes: 'settings:write' });
  expect(writer.scopes).toEqual(['settings:read', 'settings:write']);
  expect((await settings(writer.token, t.siteId)).status).toBe(200);
});

test('only the SHA-256 of a token is stored', async () => {
  const k = await svc.admin('key create', { org: t.orgId, user: t.userId });
  const store = svc.running.ctx.store;
  const [row] = await store.query<Record<string, unknown>>(
    `SELECT * FROM ${store.table('api_keys')} FINAL WHERE id = {id:UUID}`, { id: k.id },
  );
  expect(row.token_hash).toBe(createHash('sha256').update(k.token).digest('hex'));
  expect(JSON.stringify(row)).not.toContain(k.token.slice(8));
});

test('revoking a key that was just used refuses its next request', async () => {
  const k = await t.key({ scopes: ['settings:read'] });
  expect((await settings(k.token, t.siteId)).status).toBe(200);
  expect((await settings(k.token, t.siteId)).status).toBe(200); // served from the cache now
  expect(await svc.admin('key revoke', { key: k.id })).toEqual({ id: k.id, revoked: true });
  const res = await settings(k.token, t.siteId);
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('invalid_credential');
});

test('a key stops working the moment its expiry passes, without any write', async () => {
  setClock('2030-01-01T00:00:00Z');
  const k = await t.key({ expiresAt: '2030-01-01T01:00:00Z' });
  expect(await sitesOf(k.token)).toEqual([...t.siteIds].sort());
  setClock('2030-01-01T00:59:59.999Z');
  expect(await sitesOf(k.token)).toEqual([...t.siteIds].sort());
  setClock('2030-01-01T01:00:00Z');
  expect(await sitesOf(k.token)).toBe(401);
});

test('removing a user revokes their keys at once', async () => {
  const u = await svc.admin('user create', { org: t.orgId, email: 'gone@example.com', role: 'admin' });
  const k = await t.key({ userId: u.id });
  expect(await sitesOf(k.token)).toEqual([...t.siteIds].sort());
  expect(await svc.admin('user remove', { org: t.orgId, user: u.id })).toEqual({ id: u.id, removed: true });
  expect(await sitesOf(k.token)).toBe(401);
  const listed = await svc.admin<{ keys: { id: string; revoked: boolean }[] }>('key list', { org: t.orgId });
  expect(listed.keys.find((x) => x.id === k.id)?.revoked).toBe(true);
});

test('a key that names no site reaches sites added later; one that names sites does not', async () => {
  const all = await t.key();
  const one = await t.key({ sites: [t.siteIds[0]] });
  expect(await sitesOf(all.token)).toEqual([...t.siteIds].sort());
  expect(await sitesOf(one.token)).toEqual([t.siteIds[0]]);
  const added = await svc.admin<{ id: string }>('site create', { org: t.orgId, domain: 'later.example.com' });
  expect(await sitesOf(all.token)).toEqual([...t.siteIds, added.id].sort());
  expect(await sitesOf(one.token)).toEqual([t.siteIds[0]]);
});

test('a key never reaches further than its creator, and a change of access applies to the next request', async () => {
  const [s1, s2] = t.siteIds;
  const m = await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'm@example.com', role: 'member' });
  const k = await t.key({ userId: m.id, sites: [s1, s2], scopes: ['settings:read'] });
  expect((await settings(k.token, s2)).status).toBe(200);
  const confine = await svc.api('PATCH', `/team/members/${m.id}/sites`, { token: t.token, body: { site_ids: [s1] } });
  expect(confine.status).toBe(200);
  expect((await settings(k.token, s2)).status).toBe(403);
  expect((await settings(k.token, s1)).status).toBe(200);
  await svc.api('PATCH', `/team/members/${m.id}/sites`, { token: t.token, body: { site_ids: [] } });
  expect((await settings(k.token, s2)).status).toBe(200);
});

test('last_used_at is recorded after a successful request', async () => {
  const k = await t.key();
  const before = await svc.admin<{ keys: { id: string; last_used_at: string | null }[] }>('key list', { org: t.orgId });
  expect(before.keys.find((x) => x.id === k.id)?.last_used_at).toBeNull();
  const start = Date.now();
  expect(await sitesOf(k.token)).not.toBe(401);
  let used: string | null | undefined = null;
  for (let i = 0; i < 40 && !used; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const after = await svc.admin<{ keys: { id: string; last_used_at: string | null }[] }>('key list', { org: t.orgId });
    used = after.keys.find((x) => x.id === k.id)?.last_used_at;
  }
  expect(used).toBeTruthy();
  expect(Date.parse(used!)).toBeGreaterThanOrEqual(start - 1000);
});

test('a key of one organisation never sees another organisation', async () => {
  const other = await svc.tenant({ scopes: [...ALL_SCOPES] });
  expect(await sitesOf(other.token)).toEqual([other.siteId]);
  const team = await svc.api('GET', '/team', { token: other.token });
  expect(team.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([other.userId]);
  expect((await settings(other.token, t.siteId)).status).toBe(403);
});
