import { setClock } from '../../core/clock';
import { randomUUID } from 'node:crypto';
import { registeredRoutes, type RouteInfo } from '../../api/route';
import { ALL_SCOPES, type Scope } from '../../core/domain';
import { generateToken } from '../../model/keys';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import type { HttpResult } from '../support/http';

/**
 * The auth matrix over EVERY route the service registers (whoever added it): token state x scope x
 * site reach x organisation. It reads the route list RouteRegistrar records, so a new route is covered
 * the moment it is registered, with no edit here.
 */
let svc: TestService;
let a: Tenant; // the caller's organisation: sites A1 (in reach) and A2
let b: Tenant; // another organisation
let routes: RouteInfo[];
const keys: Record<string, string> = {};

/** Routes any key may call (PRODUCT.md §5: GET /sites lists what the key reaches). */
const SCOPELESS = ['get /sites'];

beforeAll(async () => {
  // The matrix sends hundreds of bad tokens from one address: lift the failed-authentication budget
  // (test/api/auth-failures.test.ts covers it) so every route answers its own 401.
  svc = await startTestService({ TALLY_RATE_LIMIT_PER_MINUTE: '100000', TALLY_AUTH_FAILURES_PER_MINUTE: '100000' });
  routes = registeredRoutes();
  a = await svc.tenant({ sites: 2, scopes: [...ALL_SCOPES] });
  b = await svc.tenant({ scopes: [...ALL_SCOPES] });
  const [a1] = a.siteIds;
  keys.full = a.token;
  keys.siteRestricted = (await a.key({ scopes: [...ALL_SCOPES], sites: [a1] })).token;
  const member = await svc.admin<{ id: string }>('user create', { org: a.orgId, email: 'member@example.com', role: 'member' });
  const confine = await svc.api('PATCH', `/team/members/${member.id}/sites`, { token: a.token, body: { site_ids: [a1] } });
  expect(confine.status).toBe(200);
  keys.memberRestricted = (await a.key({ scopes: [...ALL_SCOPES], userId: member.id })).token;
  for (const scope of new Set(routes.flatMap((r) => [r.scope, r.alsoScope]).filter((s): s is Scope => !!s))) {
    keys[`without:${scope}`] = (await a.key({ scopes: withoutScope(scope) })).token;
  }
  keys.revoked = await revokedToken(a);
  // Made while its expiry was still ahead (a past --expires-at is refused), then the clock passes it.
  setClock('2019-12-31T00:00:00Z');
  keys.expired = (await a.key({ scopes: [...ALL_SCOPES], expiresAt: '2020-01-01T00:00:00Z' })).token;
  setClock(null);
  keys.removedUser = await removedUserToken(a);
});
afterAll(() => svc.stop());

/** Every scope but `scope`; leaving out a read scope leaves out its write scope too (write implies read). */
function withoutScope(scope: Scope): Scope[] {
  const resource = scope.split(':')[0];
  return ALL_SCOPES.filter((s) => s !== scope && !(scope.endsWith(':read') && s === `${resource}:write`));
}

async function revokedToken(t: Tenant): Promise<string> {
  const k = await t.key({ scopes: [...ALL_SCOPES] });
  await svc.admin('key revoke', { key: k.id });
  return k.token;
}

async function removedUserToken(t: Tenant): Promise<string> {
  const u = await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'leaver@example.com', role: 'admin' });
  const k = await t.key({ scopes: [...ALL_SCOPES], userId: u.id });
  await svc.admin('user remove', { org: t.orgId, user: u.id });
  return k.token;
}

/** The route's path with {siteId} set to `site` and every other parameter a random uuid. */
function pathFor(r: RouteInfo, site: string): string {
  return r.path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'siteId' ? site : randomUUID()));
}

const hasSite = (r: RouteInfo) => r.path.includes('{siteId}');
const label = (r: RouteInfo) => `${r.method.toUpperCase()} ${r.path}`;

interface Case {
  route: RouteInfo;
  what: string;
  token?: string;
  site: string;
  headers?: Record<string, string>;
}

/** Runs cases a batch at a time (parallel requests, bounded so two cores are not swamped). */
async function run(cases: Case[]): Promise<{ c: Case; res: HttpResult }[]> {
  const out: { c: Case; res: HttpResult }[] = [];
  for (let i = 0; i < cases.length; i += 16) {
    const batch = cases.slice(i, i + 16);
    const results = await Promise.all(
      batch.map((c) =>
        svc.api(c.route.method.toUpperCase(), pathFor(c.route, c.site), {
          token: c.token, headers: c.headers, body: c.route.method === 'get' ? undefined : {},
        }),
      ),
    );
    results.forEach((res, j) => out.push({ c: batch[j], res }));
  }
  return out;
}

const describeCase = ({ c, res }: { c: Case; res: HttpResult }) => `${label(c.route)} [${c.what}] -> ${res.status} ${res.text}`;

test('the matrix sees every registered route, and only GET /sites goes without a scope', () => {
  expect(routes.length).toBeGreaterThanOrEqual(6);
  expect(routes.map(label)).toEqual(expect.arrayContaining(['GET /sites', 'POST /sites', 'GET /team', 'PATCH /sites/{siteId}/settings']));
  expect(routes.filter((r) => !r.scope).map((r) => `${r.method} ${r.path}`)).toEqual(SCOPELESS);
});

test('missing, garbage, malformed, unknown, revoked, expired and orphaned tokens: one identical 401 on every route', async () => {
  const tokenStates: [string, Partial<Case>][] = [
    ['no header', {}],
    ['garbage', { token: 'garbage' }],
    ['wrong checksum', { token: generateToken().slice(0, -1) + '0' }],
    ['unknown well-formed key', { token: generateToken() }],
    ['revoked', { token: keys.revoked }],
    ['expired', { token: keys.expired }],
    ['creator removed', { token: keys.removedUser }],
    ['basic scheme', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }],
    ['empty bearer', { headers: { authorization: 'Bearer ' } }],
  ];
  const cases = routes.flatMap((route) =>
    tokenStates.map(([what, c]) => ({ route, what, site: a.siteIds[0], ...c })),
  );
  const results = await run(cases);
  const reference = results[0].res.text;
  expect(JSON.parse(reference)).toEqual({
    error: { code: 'invalid_credential', message: expect.any(String) },
  });
  const odd = results.filter(({ res }) => res.status !== 401 || res.text !== reference).map(describeCase);
  expect(odd).toEqual([]);
});

test('missing scope, site out of key reach, out of member reach, other organisation, absent site: one identical 403', async () => {
  const [a1, a2] = a.siteIds;
  const cases: Case[] = [];
  for (const route of routes) {
    if (route.scope) cases.push({ route, what: `key without ${route.scope}`, token: keys[`without:${route.scope}`], site: a1 });
    if (route.alsoScope) cases.push({ route, what: `key without ${route.alsoScope}`, token: keys[`without:${route.alsoScope}`], site: a1 });
    if (!hasSite(route)) continue;
    cases.push(
      { route, what: 'site outside the key sites', token: keys.siteRestricted, site: a2 },
      { route, what: 'site outside the member access', token: keys.memberRestricted, site: a2 },
      { route, what: 'site of another organisation', token: keys.full, site: b.siteIds[0] },
      { route, what: 'other organisation key on our site', token: b.token, site: a1 },
      { route, what: 'site that does not exist', token: keys.full, site: randomUUID() },
      { route, what: 'site id that is not a uuid', token: keys.full, site: 'not-a-site' },
    );
  }
  const results = await run(cases);
  const reference = results[0].res.text;
  expect(JSON.parse(reference)).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
  const odd = results.filter(({ res }) => res.status !== 403 || res.text !== reference).map(describeCase);
  expect(odd).toEqual([]);
});

test('with the scope and the site in reach, no route answers 401, 403 or 5xx', async () => {
  const [a1] = a.siteIds;
  const cases: Case[] = routes.flatMap((route) => [
    { route, what: 'full key', token: keys.full, site: a1 },
    // A route that needs every site's reach (POST /sites) refuses confined keys: test/api/settings-sites.test.ts.
    ...(route.everySite ? [] : [
      { route, what: 'key confined to the site', token: keys.siteRestricted, site: a1 },
      { route, what: 'member confined to the site', token: keys.memberRestricted, site: a1 },
    ]),
    ...(route.scope ? [{ route, what: `only ${route.scope}`, token: '', site: a1 }] : []),
  ]);
  for (const c of cases.filter((x) => x.token === '')) {
    c.token = (await a.key({ scopes: [c.route.scope!, ...(c.route.alsoScope ? [c.route.alsoScope] : [])] })).token;
  }
  const results = await run(cases);
  const odd = results.filter(({ res }) => [401, 403].includes(res.status) || res.status >= 500).map(describeCase);
  expect(odd).toEqual([]);
  for (const { res } of results) expect(res.text).not.toMatch(/\bat .+\.(ts|js):\d+/); // no stack trace
});
