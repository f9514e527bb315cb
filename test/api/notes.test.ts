import fc from 'fast-check';
import { setClock } from '../../core/clock';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';

let svc: TestService;
let t: Tenant;
beforeAll(async () => {
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['notes:write', 'settings:write'] });
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});
afterEach(() => setClock(null));

const post = (body: unknown, token = t.token, siteId = t.siteId) => svc.api('POST', `/sites/${siteId}/notes`, { token, body });
const list = (qs = '', token = t.token, siteId = t.siteId) => svc.api('GET', `/sites/${siteId}/notes${qs}`, { token });

describe('creating a note', () => {
  test('defaults to date granularity, shows created_at only, and names the key creator as author', async () => {
    const res = await post({ body: 'Launched v2', occurred_at: '2026-03-10T12:00:00Z' });
    expect(res.status).toBe(201);
    expect(res.body.meta).toEqual({ site_id: t.siteId });
    expect(res.body.data).toMatchObject({ body: 'Launched v2', granularity: 'date', author_id: t.userId });
    expect(res.body.data.created_at).toEqual(expect.any(String));
    expect(Object.keys(res.body.data).sort()).toEqual(['author_id', 'body', 'created_at', 'granularity', 'id', 'occurred_at']);
  });

  test('keeps line breaks, tabs and right-to-left text in a body', async () => {
    const body = 'Launch:\n\t- pricing page\r\n\t- מחירים \u2067v2\u2069';
    const res = await post({ body, occurred_at: '2026-03-10T12:00:00Z' });
    expect(res.status).toBe(201);
    expect(res.body.data.body).toBe(body);
  });

  test.each([
    [{ body: 'x', occurred_at: '2026-03-10T12:00:00Z', site_id: '00000000-0000-4000-8000-000000000000' }, 'site_id'],
    [{ body: 'x', occurred_at: '2026-03-10T12:00:00Z', color: 'red' }, 'color'],
    [{ occurred_at: '2026-03-10T12:00:00Z' }, 'body'],
    [{ body: 'x' }, 'occurred_at'],
    [{ body: 'x', occurred_at: 'yesterday' }, 'occurred_at'],
    [{ body: 'x', occurred_at: '2026-03-10T12:00:00Z', granularity: 'hour' }, 'granularity'],
    [{ body: '   ', occurred_at: '2026-03-10T12:00:00Z' }, 'body'],
    [{ body: 'Deploy \u001b[31mfailed', occurred_at: '2026-03-10T12:00:00Z' }, 'body: must not contain control characters other than tab and line breaks (U+001B at character 8)'],
  ])('refuses %j with 400 invalid_request naming %s', async (body, field) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(field);
  });

  test('needs notes:write; notes:read may only list; analytics:read may do neither', async () => {
    const reader = await t.key({ scopes: ['notes:read'] });
    const analyst = await t.key({ scopes: ['analytics:read'] });
    expect((await post({ body: 'x', occurred_at: '2026-03-10T12:00:00Z' }, reader.token)).status).toBe(403);
    expect((await list('', reader.token)).status).toBe(200);
    expect((await list('', analyst.token)).status).toBe(403);
  });

  test('a site outside the key or in another organisation is 403, as is a site that does not exist', async () => {
    const other = await svc.tenant({ scopes: ['notes:write'] });
    expect((await post({ body: 'x', occurred_at: '2026-03-10T12:00:00Z' }, t.token, other.siteId)).status).toBe(403);
    expect((await list('', t.token, '00000000-0000-4000-8000-000000000000')).status).toBe(403);
  });
});

describe('listing notes', () => {
  let s: Tenant;
  beforeAll(async () => {
    s = await svc.tenant({ scopes: ['notes:write'] });
    // Created in this order, but they happened in another: the list follows occurred_at.
    for (const [body, at] of [['b', '2026-02-01T10:00:00Z'], ['c', '2026-03-01T10:00:00Z'], ['a', '2025-01-15T10:00:00Z']]) {
      expect((await post({ body, occurred_at: at, granularity: 'minute' }, s.token, s.siteId)).status).toBe(201);
    }
  });

  test('newest first by occurred_at; without a window the most recent, and no meta.range', async () => {
    setClock('2026-03-20T12:00:00Z');
    const res = await list('', s.token, s.siteId);
    expect(res.status).toBe(200);
    expect(res.body.data.map((n: { body: string }) => n.body)).toEqual(['c', 'b', 'a']);
    expect(res.body.meta).toEqual({ site_id: s.siteId, page: { limit: 100, offset: 0, has_more: false } });
    for (const row of res.body.data) {
      expect(Object.keys(row).sort()).toEqual(['author_id', 'body', 'created_at', 'granularity', 'id', 'occurred_at', 'updated_at']);
    }
  });

  test('a window filters by occurred_at (a backfilled note is found in its past) and adds meta.range', async () => {
    setClock('2026-03-20T12:00:00Z');
    const res = await list('?from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z', s.token, s.siteId);
    expect(res.body.data.map((n: { body: string }) => n.body)).toEqual(['a']);
    expect(res.body.meta.range).toEqual({ from: '2025-01-01T00:00:00+00:00', to: '2025-02-01T00:00:00+00:00', tz: 'UTC', clamped: false });
    const month = await list('?period=month', s.token, s.siteId);
    expect(month.body.data.map((n: { body: string }) => n.body)).toEqual(['c']);
    expect(month.body.meta.range.from).toBe('2026-03-01T00:00:00+00:00');
  });

  test('has_more is measured and offset pages on', async () => {
    const first = await list('?limit=2', s.token, s.siteId);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.meta.page).toEqual({ limit: 2, offset: 0, has_more: true });
    const second = await list('?limit=2&offset=2', s.token, s.siteId);
    expect(second.body.data.map((n: { body: string }) => n.body)).toEqual(['a']);
    expect(second.body.meta.page.has_more).toBe(false);
  });

  test.each([
    ['?period=last7d&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z', 'period'],
    ['?from=2026-01-01T00:00:00Z', 'to'],
    ['?to=2026-01-01T00:00:00Z', 'from'],
    ['?period=forever', 'period'],
    ['?period=today&tz=Mars/Olympus', 'tz'],
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
  ])('refuses %s naming %s', async (qs, field) => {
    const res = await list(qs, s.token, s.siteId);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(field);
  });

  test.each([
    // In the reports' words: one parameter reads one way on every route.
    ['?period=today&tz=Mars/Olympus', 'tz: "Mars/Olympus" is not a known IANA timezone'],
    ['?period=today&bots=some', 'bots: must be one of excluded, included'],
    ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from: must be before to'],
    ['?from=2026-01-01T00:00:00Z', 'to: is required when from is given'],
    ['?period=today&to=2026-01-01T00:00:00Z', 'period: cannot be combined with from/to'],
  ])('refuses the window %s in the reports\' words (%s)', async (qs, message) => {
    const res = await list(qs, s.token, s.siteId);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(message);
  });

  test('unreadable bounds are named once each, with no "must be before to" about them', async () => {
    const res = await list('?from=x&to=y', s.token, s.siteId);
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['from', 'to']);
  });

  test('a tz in any letter case is read as ClickHouse spells it (europe/paris), not answered 500', async () => {
    const res = await list('?period=all&tz=europe/paris', s.token, s.siteId);
    expect(res.status).toBe(200);
    expect(res.body.meta.range.tz).toBe('Europe/Paris');
    expect(res.body.data.map((n: { body: string }) => n.body)).toEqual(['c', 'b', 'a']);
  });

  test('period=all starts at the earliest note; a backfilled note before the retention makes it clamped', async () => {
    setClock('2026-03-20T12:00:00Z');
    const all = await list('?period=all', s.token, s.siteId);
    expect(all.body.data.map((n: { body: string }) => n.body)).toEqual(['c', 'b', 'a']);
    expect(all.body.meta.range).toEqual({ from: '2025-01-15T10:00:00+00:00', to: '2026-03-20T12:00:00+00:00', tz: 'UTC', clamped: false });
    const old = await svc.tenant({ scopes: ['notes:write'] });
    for (const [body, at] of [['founding', '1900-01-01T00:00:00Z'], ['launch', '2026-03-01T10:00:00Z']]) {
      expect((await post({ body, occurred_at: at, granularity: 'minute' }, old.token, old.siteId)).status).toBe(201);
    }
    const clamped = await list('?period=all', old.token, old.siteId);
    expect(clamped.body.data.map((n: { body: string }) => n.body)).toEqual(['launch']);
    expect(clamped.body.meta.range.clamped).toBe(true);
    expect(Date.parse(clamped.body.meta.range.from)).toBe(Date.parse('2026-03-20T12:00:00Z') - 1095 * 86_400_000);
  });

  test('period=all on a site without notes starts at today\'s midnight, as the reports\' all does without events', async () => {
    setClock('2026-03-20T12:00:00Z');
    const empty = await svc.tenant({ scopes: ['notes:write'] });
    const res = await list('?period=all&tz=Asia/Tokyo', empty.token, empty.siteId);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.range).toEqual({ from: '2026-03-20T00:00:00+09:00', to: '2026-03-20T21:00:00+09:00', tz: 'Asia/Tokyo', clamped: false });
  });

  test('a window older than the retention is clamped and says so', async () => {
    setClock('2026-03-20T12:00:00Z');
    const res = await list('?from=2000-01-01T00:00:00Z&to=2026-03-20T00:00:00Z', s.token, s.siteId);
    expect(res.body.meta.range.clamped).toBe(true);
    expect(Date.parse(res.body.meta.range.from)).toBe(Date.parse('2026-03-20T12:00:00Z') - 1095 * 86_400_000);
  });
});

describe('granularity', () => {
  test('a date note stays on its calendar day when the site timezone changes; a minute note keeps its instant', async () => {
    const s = await svc.tenant({ scopes: ['notes:write', 'settings:write'] });
    const day = await post({ body: 'day', occurred_at: '2026-03-10T12:00:00Z', granularity: 'date' }, s.token, s.siteId);
    const minute = await post({ body: 'minute', occurred_at: '2026-03-10T12:00:00Z', granularity: 'minute' }, s.token, s.siteId);
    expect(day.body.data.occurred_at).toBe('2026-03-10T00:00:00+00:00');
    expect(minute.body.data.occurred_at).toBe('2026-03-10T12:00:00.000Z');

    const tz = await svc.api('PATCH', `/sites/${s.siteId}/settings`, { token: s.token, body: { timezone: 'Pacific/Kiritimati' } });
    expect(tz.status).toBe(200);
    const after = new Map((await list('', s.token, s.siteId)).body.data.map((n: { body: string; occurred_at: string }) => [n.body, n.occurred_at]));
    // Still 10 March in the new zone (UTC+14); the instant note has not moved.
    expect(after.get('day')).toBe('2026-03-10T00:00:00+14:00');
    expect(after.get('minute')).toBe('2026-03-10T12:00:00.000Z');
  });

  test('the day of a date note is taken in the site timezone at creation', async () => {
    const s = await svc.tenant({ scopes: ['notes:write'], timezone: 'America/New_York' });
    // 02:00 UTC on 11 March is still 10 March in New York.
    const res = await post({ body: 'late', occurred_at: '2026-03-11T02:00:00Z' }, s.token, s.siteId);
    expect(res.body.data.occurred_at).toBe('2026-03-10T00:00:00-04:00');
  });

  test('a date note is in a window when its day is, in the window timezone', async () => {
    const s = await svc.tenant({ scopes: ['notes:write'] });
    await post({ body: 'd', occurred_at: '2026-03-10T12:00:00Z', granularity: 'date' }, s.token, s.siteId);
    const tokyo = '&tz=Asia/Tokyo';
    const inside = await list(`?from=2026-03-10T00:00:00%2B09:00&to=2026-03-11T00:00:00%2B09:00${tokyo}`, s.token, s.siteId);
    expect(inside.body.data.map((n: { body: string }) => n.body)).toEqual(['d']);
    const before = await list(`?from=2026-03-09T00:00:00%2B09:00&to=2026-03-10T00:00:00%2B09:00${tokyo}`, s.token, s.siteId);
    expect(before.body.data).toEqual([]);
  });
});

describe('editing and deleting', () => {
  test('PATCH replaces the text and shows updated_at only; other fields are refused', async () => {
    const created = await post({ body: 'old', occurred_at: '2026-03-10T12:00:00Z' });
    const id = created.body.data.id;
    const res = await svc.api('PATCH', `/sites/${t.siteId}/notes/${id}`, { token: t.token, body: { body: 'new' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, body: 'new', occurred_at: created.body.data.occurred_at });
    expect(res.body.data.updated_at).toEqual(expect.any(String));
    expect(Object.keys(res.body.data).sort()).toEqual(['author_id', 'body', 'granularity', 'id', 'occurred_at', 'updated_at']);
    const moved = await svc.api('PATCH', `/sites/${t.siteId}/notes/${id}`, { token: t.token, body: { body: 'x', occurred_at: '2020-01-01T00:00:00Z' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error.message).toContain('occurred_at');
    const empty = await svc.api('PATCH', `/sites/${t.siteId}/notes/${id}`, { token: t.token, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain('body');
  });

  test('a note of another site is not found through this site; a bad id is 404', async () => {
    const two = await svc.tenant({ scopes: ['notes:write'], sites: 2 });
    const created = await post({ body: 'a', occurred_at: '2026-03-10T12:00:00Z' }, two.token, two.siteIds[0]);
    const res = await svc.api('PATCH', `/sites/${two.siteIds[1]}/notes/${created.body.data.id}`, { token: two.token, body: { body: 'b' } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await svc.api('DELETE', `/sites/${two.siteIds[0]}/notes/not-a-uuid`, { token: two.token })).status).toBe(404);
  });

  test('DELETE removes the note; a second DELETE is 404; notes:read cannot delete', async () => {
    const created = await post({ body: 'gone', occurred_at: '2026-03-10T12:00:00Z' });
    const id = created.body.data.id;
    const reader = await t.key({ scopes: ['notes:read'] });
    expect((await svc.api('DELETE', `/sites/${t.siteId}/notes/${id}`, { token: reader.token })).status).toBe(403);
    const res = await svc.api('DELETE', `/sites/${t.siteId}/notes/${id}`, { token: t.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id, deleted: true });
    expect((await list()).body.data.map((n: { id: string }) => n.id)).not.toContain(id);
    expect((await svc.api('DELETE', `/sites/${t.siteId}/notes/${id}`, { token: t.token })).status).toBe(404);
  });
});

test('a date note whose day in the site\'s zone falls outside 1900-2299 is refused: the stored day would be clamped to another', async () => {
  for (const [timezone, occurred_at, day] of [['America/New_York', '1900-01-01T03:00:00Z', '1899-12-31'], ['Pacific/Kiritimati', '2299-12-31T12:00:00Z', '2300-01-01']]) {
    const site = await svc.tenant({ scopes: ['notes:write'], timezone });
    const res = await post({ body: 'edge', occurred_at }, site.token, site.siteId);
    expect([res.status, res.body.error.message]).toEqual([400,
      `occurred_at: falls on ${day} in the site's timezone (${timezone}); a date note's day must lie between 1900 and 2299`]);
    // The same instant pinned to the minute is stored as it is; a day inside the range as a date note too.
    expect((await post({ body: 'minute', occurred_at, granularity: 'minute' }, site.token, site.siteId)).status).toBe(201);
    const inside = await post({ body: 'day', occurred_at: timezone === 'America/New_York' ? '1900-01-01T05:00:00Z' : '2299-12-31T09:00:00Z' }, site.token, site.siteId);
    expect(inside.status).toBe(201);
    const listed = (await svc.api('GET', `/sites/${site.siteId}/notes`, { token: site.token })).body.data;
    expect(listed.find((n: { body: string }) => n.body === 'day').occurred_at).toBe(inside.body.data.occurred_at);
  }
});

test('author_id is the key creator, and null once that user leaves the team; the note stays', async () => {
  const s = await svc.tenant({ scopes: ['notes:write'] });
  const member = await svc.admin<{ id: string }>('user create', { org: s.orgId, email: `m-${Date.now()}@example.com`, role: 'member' });
  const key = await s.key({ scopes: ['notes:write'], userId: member.id });
  const created = await post({ body: 'by member', occurred_at: '2026-03-10T12:00:00Z' }, key.token, s.siteId);
  expect(created.body.data.author_id).toBe(member.id);
  await svc.admin('user remove', { org: s.orgId, user: member.id });
  const res = await list('', s.token, s.siteId);
  const note = res.body.data.find((n: { id: string }) => n.id === created.body.data.id);
  expect(note).toMatchObject({ body: 'by member', author_id: null });
  // The leaver's key is revoked with them.
  expect((await list('', key.token, s.siteId)).status).toBe(401);
});

test('the OpenAPI document lists the resource routes (notes, funnels, alerts, share, widget) with their scopes', async () => {
  const res = await request('GET', `${svc.base}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  const paths = res.body.paths as Record<string, Record<string, { summary: string }>>;
  for (const [p, method, scope] of [
    ['/sites/{siteId}/notes', 'get', 'notes:read'],
    ['/sites/{siteId}/notes', 'post', 'notes:write'],
    ['/sites/{siteId}/notes/{noteId}', 'delete', 'notes:write'],
    ['/sites/{siteId}/funnels/{funnelId}/report', 'get', 'funnels:read'],
    ['/sites/{siteId}/alerts/{alertId}/firings', 'get', 'alerts:read'],
    ['/sites/{siteId}/share', 'put', 'settings:write'],
    ['/sites/{siteId}/widget', 'get', 'settings:read'],
  ]) {
    expect(paths[p]?.[method]?.summary).toContain(scope);
  }
});

describe('no input gives a 5xx', () => {
  const field = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.constantFrom('2026-03-10T12:00:00Z', 'date', 'minute', ''));
  const bodies = fc.oneof(
    fc.jsonValue(),
    fc.record({ body: field, occurred_at: field, granularity: field }, { requiredKeys: [] }),
  );
  const queries = fc.dictionary(fc.constantFrom('period', 'from', 'to', 'tz', 'bots', 'limit', 'offset', 'x'), fc.string(), { maxKeys: 4 });

  test('POST and PATCH bodies', async () => {
    const id = (await post({ body: 'x', occurred_at: '2026-03-10T12:00:00Z' })).body.data.id;
    await fc.assert(fc.asyncProperty(bodies, async (body) => {
      expect((await post(body)).status).toBeLessThan(500);
      expect((await svc.api('PATCH', `/sites/${t.siteId}/notes/${id}`, { token: t.token, body })).status).toBeLessThan(500);
    }), { numRuns: 40 });
  });

  test('list query strings', async () => {
    await fc.assert(fc.asyncProperty(queries, async (q) => {
      expect((await list('?' + new URLSearchParams(q).toString())).status).toBeLessThan(500);
    }), { numRuns: 60 });
  });
});
