import { registeredRoutes } from '../../api/route';
import { startTestService, type TestService } from '../support/harness';

/** The OpenAPI 3.1 document is generated from the same zod schemas the routes parse with. */
let svc: TestService;
let doc: any;
beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.api('GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(() => svc.stop());

test('it is OpenAPI 3.1 with bearer security, served over HTTPS without a key', () => {
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.servers).toEqual([{ url: '/api/v1' }]);
  expect(doc.security).toEqual([{ bearer: [] }]);
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
});

test('every registered route is in it, once, with its scope and the error responses', () => {
  const routes = registeredRoutes();
  expect(routes.length).toBeGreaterThan(0);
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m} ${p}`));
  expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
  for (const r of routes) {
    const op = doc.paths[r.path][r.method];
    if (r.scope) expect(op.summary).toContain(`(needs ${r.scope}${r.alsoScope ? ` and ${r.alsoScope}` : ''})`);
    for (const status of ['400', '401', '403', '429']) {
      expect(op.responses[status].content['application/json'].schema.properties.error.$ref).toBe('#/components/schemas/Error');
    }
  }
});

test('write bodies refuse unknown fields in the document too, and write responses list the error object', () => {
  const body = doc.paths['/sites/{siteId}/settings'].patch.requestBody.content['application/json'].schema;
  expect(body.additionalProperties).toBe(false);
  expect(Object.keys(body.properties)).toEqual(expect.arrayContaining([
    'name', 'domain', 'excluded_paths', 'session_strategy', 'allowed_hostnames', 'excluded_countries', 'excluded_hostnames',
  ]));
  const ok = doc.paths['/sites/{siteId}/settings'].patch.responses['200'].content['application/json'].schema;
  expect(Object.keys(ok.properties)).toEqual(['data', 'meta', 'error']);
  expect(doc.paths['/sites'].post.responses['201']).toBeDefined();
  expect(Object.keys(doc.paths['/sites/{siteId}/settings'].patch.responses)).toEqual(expect.arrayContaining(['413', '415']));
});

test('every create route documents the 201 it answers, and id routes their 404', () => {
  for (const path of ['/sites', '/goals', '/sites/{siteId}/notes', '/sites/{siteId}/funnels', '/sites/{siteId}/alerts']) {
    expect(Object.keys(doc.paths[path].post.responses)).toContain('201');
    expect(doc.paths[path].post.responses['200']).toBeUndefined();
  }
  expect(doc.paths['/sites/{siteId}/notes/{noteId}'].delete.responses['404']).toBeDefined();
  expect(doc.paths['/sites/{siteId}/notes'].get.responses['404']).toBeUndefined();
});

test('path ids are uuids and paging parameters carry their bounds', () => {
  const params = doc.paths['/team/members/{userId}/sites'].patch.parameters;
  expect(params).toEqual([expect.objectContaining({ name: 'userId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } })]);
  const q = Object.fromEntries(doc.paths['/sites'].get.parameters.map((p: any) => [p.name, p.schema]));
  expect(q.limit).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
  expect(q.offset).toEqual({ type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0 });
});

test('routes document the refusals of their own: conflicts, a missing board or widget, an unreachable provider or queue', () => {
  const codes = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
  const said = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].description as string;
  expect(said('/team/members/{userId}/sites', 'patch', '409')).toMatch(/^last_owner:/);
  expect(said('/sites/{siteId}/widget', 'put', '409')).toMatch(/^no_events:/);
  expect(said('/sites', 'post', '409')).toMatch(/^conflict:/);
  expect(said('/sites/{siteId}/settings', 'patch', '409')).toMatch(/^conflict:/);
  expect(said('/goals', 'post', '409')).toMatch(/^conflict:/);
  expect(said('/sites/{siteId}/integrations/{provider}', 'put', '409')).toMatch(/^conflict:/);
  expect(said('/sites/{siteId}/integrations/{provider}', 'put', '503')).toMatch(/^provider_unavailable:/);
  expect(said('/sites/{siteId}/integrations/{provider}/resync', 'post', '503')).toMatch(/^queue_unavailable:/);
  for (const path of ['/sites/{siteId}/share', '/sites/{siteId}/widget']) expect(said(path, 'get', '404')).toMatch(/^not_found:/);
  // Only where the route can answer it.
  expect(codes('/sites/{siteId}/notes', 'post')).not.toContain('409');
  expect(said('/sites/{siteId}/overview', 'get', '503')).toMatch(/^storage_unavailable: the rollup feed failed/);
});

test('every route documents the 503 of a ClickHouse server that does not answer (server mode), after its own refusals', () => {
  const said = (path: string, method: string) => doc.paths[path][method].responses['503'].description as string;
  expect(said('/sites/{siteId}/notes', 'get')).toBe('storage_unavailable: the ClickHouse server does not answer (server mode); see Retry-After');
  expect(said('/sites/{siteId}/overview', 'get')).toMatch(/^storage_unavailable: the rollup feed failed.*; storage_unavailable: the ClickHouse server does not answer/);
  expect(said('/sites/{siteId}/notes', 'post')).toMatch(/^overloaded: .*; storage_unavailable: the ClickHouse server/);
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { description: string }> }>>)) {
    for (const [method, op] of Object.entries(methods)) expect([path, method, op.responses['503']?.description]).toEqual([path, method, expect.stringMatching(/storage_unavailable: the ClickHouse server/)]);
  }
});

test('every write documents what any write can answer: a refused body (413, 415) and a busy row (503 overloaded)', () => {
  const responses = (path: string, method: string) => doc.paths[path][method].responses;
  // DELETE takes no body and refuses one.
  expect(Object.keys(responses('/sites/{siteId}/share', 'delete'))).toEqual(expect.arrayContaining(['413', '415', '503']));
  expect(responses('/sites/{siteId}/notes', 'post')['503'].description).toMatch(/^overloaded:/);
  // A route's own 503 keeps its words and adds the busy row's.
  expect(responses('/sites/{siteId}/integrations/{provider}/resync', 'post')['503'].description).toMatch(/^queue_unavailable: .*; overloaded:/);
});

test('report parameters are documented as the types they must spell: enums, bounded integers, date-times', () => {
  const params = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.map((p: any) => [p.name, p.schema]));
  const breakdown = params('/sites/{siteId}/breakdowns/{dimension}');
  expect(breakdown.period).toMatchObject({ type: 'string', enum: ['today', 'yesterday', 'last24h', 'last7d', 'last30d', 'last12m', 'month', 'year', 'all'], default: 'last30d' });
  expect(breakdown.bots).toMatchObject({ type: 'string', enum: ['excluded', 'included'], default: 'excluded' });
  expect(breakdown.from).toMatchObject({ type: 'string', format: 'date-time' });
  expect(breakdown.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
  expect(breakdown.offset).toMatchObject({ type: 'integer', minimum: 0, default: 0 });
  expect(breakdown.filter_country).toMatchObject({ type: 'string' });
  expect(params('/sites/{siteId}/timeseries').unit).toMatchObject({ type: 'string', enum: ['minute', 'hour', 'day', 'week', 'month'] });
  expect(params('/sites/{siteId}/realtime').minutes).toMatchObject({ type: 'integer', minimum: 1, maximum: 360, default: 10 });
  expect(params('/sites/{siteId}/realtime/countries').minutes).toMatchObject({ type: 'integer', maximum: 360, default: 30 });
});

test('the breakdown dimension is documented as its closed set of 16, as the 400 lists them', () => {
  const dimension = doc.paths['/sites/{siteId}/breakdowns/{dimension}'].get.parameters.find((p: any) => p.in === 'path' && p.name === 'dimension');
  expect(dimension.schema.enum).toEqual(['path', 'entry_path', 'exit_link', 'file_download', 'hostname', 'referrer', 'channel', 'utm_campaign',
    'utm_term', 'country', 'region', 'city', 'browser', 'os', 'device', 'goal']);
});

test("body limits of the spec's Limits table are in the document: list sizes, country codes, funnel windows", () => {
  const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
  const settings = body('/sites/{siteId}/settings', 'patch').properties;
  expect(settings.allowed_hostnames).toMatchObject({ type: 'array', maxItems: 25 });
  expect(settings.excluded_paths).toMatchObject({ type: 'array', maxItems: 50 });
  expect(settings.excluded_hostnames).toMatchObject({ type: 'array', maxItems: 50 });
  expect(settings.excluded_countries).toMatchObject({ type: 'array', maxItems: 100, items: { pattern: '^[A-Za-z]{2}$' } });
  const funnel = body('/sites/{siteId}/funnels', 'post').properties.window_seconds;
  expect(funnel).toMatchObject({ type: 'integer', enum: [3600, 86400, 604800, 2592000, 7776000] });
});

test('instants are documented as date-times: every *_at field, last_seen and a range\'s bounds', () => {
  const schemas = JSON.stringify(doc);
  expect(doc.components.schemas.Range.properties.from).toMatchObject({ type: 'string', format: 'date-time' });
  const ok = (path: string, method: string, status = '200') => doc.paths[path][method].responses[status].content['application/json'].schema.properties.data;
  expect(ok('/sites/{siteId}/notes', 'post', '201').properties.created_at).toMatchObject({ format: 'date-time' });
  expect(ok('/sites/{siteId}/ai/crawlers', 'get').items.properties.last_seen).toMatchObject({ format: 'date-time' });
  // No *_at property is left a plain string.
  expect(schemas).not.toMatch(/"\w+_at":\{"type":"string"\}/);
});
