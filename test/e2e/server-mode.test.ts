import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations } from '../../clickhouse/migrate';
import { type HttpResult } from '../support/http';
import { adminCall } from '../support/processes';
import { apiCall, cli as cliOn, collect as collectOn, firingsOnceFired, makeTenant, readyz, startServerMode, type ServerMode, type TallyProc } from '../support/server-mode';
import { waitFor } from '../support/wait';

/**
 * Server mode end to end: real Tally processes (the built dist/main.js) with CLICKHOUSE_URL pointing at
 * ClickHouse's HTTP interface over the real engine (test/support/clickhouse-http.ts), sharing one
 * database and one Redis prefix: two `api` processes and a `worker`, started together
 * (test/support/server-mode.ts). test/e2e/server-mode-workers.test.ts covers the workers' jobs.
 */
let sm: ServerMode;
let api1: TallyProc;
let api2: TallyProc;
let worker: TallyProc;
let database = '';
let siteId = '';
let domain = '';
let token = '';
let alertId = '';
let orgId = '';
let ownerId = '';

const api = (p: TallyProc, method: string, apiPath: string, body?: unknown, bearer = token): Promise<HttpResult> =>
  apiCall(p, method, apiPath, bearer, body);

const collect = (p: TallyProc, url: string) => collectOn(p, domain, url);

/** Views of each path today, read through `p`. */
async function pathViews(p: TallyProc, extra = ''): Promise<Map<string, number>> {
  const r = await api(p, 'GET', `/sites/${siteId}/breakdowns/path?period=last24h&limit=1000${extra}`);
  expect(r.status).toBe(200);
  return new Map((r.body.data as { label: string; views: number }[]).map((row) => [row.label, row.views]));
}

beforeAll(async () => {
  sm = await startServerMode();
  database = sm.database;
  // Started together: both api processes and the worker run their migrations at the same moment.
  [api1, api2, worker] = await sm.startAll([{ name: 'api1', role: 'api' }, { name: 'api2', role: 'api' }, { name: 'worker', role: 'worker' }]);
  ({ orgId, ownerId, siteId, domain, token } = await makeTenant(api1, 'Server mode'));
  // Made first: the worker evaluates an alert from the first minute boundary after its creation.
  const alert = await api(api2, 'POST', `/sites/${siteId}/alerts`, { name: 'Any visitor', trigger_type: 'visitors_spike', threshold: 1, window_minutes: 60 });
  expect(alert.status).toBe(201);
  alertId = alert.body.data.id;
}, 120_000);

afterAll(async () => {
  await sm?.close();
});

test('migrations started by three processes at once are applied once', async () => {
  const rows = await (await sm.direct.query({
    query: `SELECT version, count() AS n FROM ${database}.schema_migrations GROUP BY version ORDER BY version`, format: 'JSONEachRow',
  })).json<{ version: number; n: string }>();
  expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
  expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
});

test('an event posted to either api process is acknowledged once stored and counted by the other', async () => {
  expect(await collect(api1, `https://${domain}/from-api1`)).toBe(202);
  expect((await pathViews(api2)).get('/from-api1')).toBe(1);
  expect(await collect(api2, `https://${domain}/from-api2`)).toBe(202);
  expect((await pathViews(api1)).get('/from-api2')).toBe(1);
  // Several at once on both, each report right after: the lease lets one process feed at a time, and
  // every feed covers the other process's writes too.
  const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => collect(i % 2 ? api1 : api2, `https://${domain}/burst/${i}`)));
  expect(statuses.every((s) => s === 202)).toBe(true);
  const [seen1, seen2] = await Promise.all([pathViews(api1), pathViews(api2)]);
  for (let i = 0; i < 20; i++) {
    expect(seen1.get(`/burst/${i}`)).toBe(1);
    expect(seen2.get(`/burst/${i}`)).toBe(1);
  }
});

test('hostile filter values reach the engine as bound parameters over HTTP and find their own row', async () => {
  const hostile = `/q'uo"te/back%5Cslash/%0Anew%09tab/caf%C3%A9/%F0%9F%8E%89/{x:String}/%27) OR 1=1 --`;
  expect(await collect(api1, `https://${domain}${hostile}`)).toBe(202);
  expect(await collect(api1, `https://${domain}/q'uo"te/plain`)).toBe(202);
  const all = await pathViews(api2);
  const stored = [...all.keys()].find((l) => l.includes('{x:String}'));
  expect(stored).toBeDefined();
  // Whatever the path's stored spelling, its characters travel as they are through param_ values.
  expect(stored).toMatch(/'uo"te/);
  expect(stored).toContain('\\');
  expect(stored).toContain('café');
  expect(stored).toContain('🎉');
  const only = await pathViews(api2, `&filter_path=${encodeURIComponent(stored!)}`);
  expect([...only.entries()]).toEqual([[stored, 1]]);
  const overview = await api(api1, 'GET', `/sites/${siteId}/overview?period=last24h&filter_path=${encodeURIComponent(stored!)}`);
  expect(overview.body.data.views).toBe(1);
});

test('a settings change saved through one api process applies to ingest on the other from the next event', async () => {
  // The other process has the site cached from the events above.
  expect(await collect(api2, `https://${domain}/private/before`)).toBe(202);
  const saved = await api(api1, 'PATCH', `/sites/${siteId}/settings`, { excluded_paths: ['/private/**'] });
  expect(saved.status).toBe(200);
  expect(await collect(api2, `https://${domain}/private/after`)).toBe(202);
  expect(await collect(api1, `https://${domain}/private/after-on-api1`)).toBe(202);
  const seen = await pathViews(api1);
  expect(seen.get('/private/before')).toBe(1);
  expect(seen.has('/private/after-on-api1')).toBe(false);
  expect(seen.has('/private/after')).toBe(false);
});

test('a key revoked through one api process\'s admin socket is refused by the other at once', async () => {
  const extra = await adminCall<{ id: string; token: string }>(api1.dataDir, 'key create', { org: orgId, user: ownerId, scopes: 'analytics:read' });
  expect((await api(api2, 'GET', '/sites', undefined, extra.token)).status).toBe(200); // cached by api2 now
  expect((await api(api2, 'GET', '/sites', undefined, extra.token)).status).toBe(200);
  await adminCall(api1.dataDir, 'key revoke', { key: extra.id });
  const refused = await api(api2, 'GET', '/sites', undefined, extra.token);
  expect(refused.status).toBe(401);
  expect(refused.body.error.code).toBe('invalid_credential');
});

test('an import through the CLI against one api process is reported by the other', async () => {
  const file = path.join(sm.tmp, 'import.ndjson');
  const ts = new Date(Date.now() - 3600_000).toISOString();
  writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify({ ts, name: 'pageview', url: `https://${domain}/imported/${i}` })).join('\n') + '\n');
  const cli = await cliOn(sm, api2, ['events', 'import', '--site', siteId, '--file', file]);
  expect(cli.stderr).toBe('');
  expect(cli.status).toBe(0);
  const seen = await pathViews(api1);
  for (const i of [1, 2, 3]) expect(seen.get(`/imported/${i}`)).toBe(1);
});

test('storage down: /readyz says so and reports answer 503 storage_unavailable; both recover when it is back', async () => {
  await sm.ch.kill();
  await waitFor('readyz to see storage down', async () => (await readyz(api1)).status === 503, 20_000);
  expect((await readyz(api1)).body).toMatchObject({ status: 'not_ready', storage: 'down' });
  const refused = await api(api2, 'GET', `/sites/${siteId}/overview?period=last24h`);
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe('storage_unavailable');
  await sm.restartClickHouse();
  await waitFor('readyz to see storage up', async () => (await readyz(api1)).status === 200, 20_000);
  expect(await collect(api2, `https://${domain}/after-outage`)).toBe(202);
  await waitFor('reports to answer again', async () => (await api(api1, 'GET', `/sites/${siteId}/overview?period=last24h`)).status === 200, 20_000);
  expect((await pathViews(api1)).get('/after-outage')).toBe(1);
}, 60_000);

test('the worker evaluates alerts: the alert fires and its firing is listed through an api process', async () => {
  const firings = await firingsOnceFired(api1, token, siteId, alertId);
  expect(firings.body.data[0]).toMatchObject({ alert_id: alertId, threshold: 1 });
  expect(firings.body.data[0].value).toBeGreaterThanOrEqual(1);
  expect(worker.child.exitCode).toBeNull();
}, 150_000);

