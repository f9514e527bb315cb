import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { isoToCh } from '../../clickhouse/meta';
import { ALL_SCOPES } from '../../core/domain';
import { visitorIdFor } from '../../ingest/hash';
import { consoleDate, shiftDate } from '../../integrations/search-console';
import { DIMENSION_KEYS } from '../../query/registry/dimensions';
import { evaluateAlerts } from '../../workers/jobs/alerts';
import { setClock } from '../../core/clock';
import { startGoogleDouble, type GoogleDouble } from '../support/google-double';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request, type HttpResult } from '../support/http';
import { backfillState } from '../support/integrations';
import { FIREFOX, GPTBOT, IPHONE, toNdjson, type Line } from '../integration/reports-support';

async function evaluatedNextMinute() {
  setClock(new Date(Date.now() + 60_000).toISOString());
  try {
    await evaluateAlerts(svc.running.ctx);
  } finally {
    setClock(null);
  }
}

/**
 * The OpenAPI document describes the answers the service really gives. Every operation of the
 * document is called against a real service holding real events, and every answer, success or
 * refusal, is validated against the schema the document gives for that path, method and status
 * (JSON Schema 2020-12, the dialect of OpenAPI 3.1). Beyond the document's own schema:
 * - a status the operation does not document fails;
 * - an object field the document does not list fails, where the document does not say the object
 *   is open (a generated client would drop it);
 * - a field the document lists under `data` or `meta` that no answer ever carried fails (a
 *   generated client would expect it).
 */
let svc: TestService;
let google: GoogleDouble;
let doc: any;
let t: Tenant;

/** Ids the cases name in their paths and bodies: fixtures, plus what create cases keep. */
const ids: Record<string, string> = {};
/** Who calls: the owner's key with every scope, a key with analytics:read only, and keys that are no key. */
type Caller = 'owner' | 'reader' | 'none' | 'garbage' | 'revoked';
const tokens: Partial<Record<Caller, string>> = { garbage: 'tly_not_a_key' };

const MINUTE = 60_000;
const ago = (minutes: number) => new Date(Date.now() - minutes * MINUTE).toISOString();

// ---------------------------------------------------------------------------------------------
// Fixtures: a site with human visits, crawler hits, goals, a payment and search-console rows.

function visits(domain: string): Line[] {
  const day = 24 * 60;
  return [
    // A two-page session from Google with UTM tags, in Berlin; it signs up and clicks out.
    { ts: ago(day + 30), visitor: 'v1', path: '/', query: 'utm_source=news&utm_medium=email&utm_campaign=spring&utm_term=shoes', referrer: 'https://www.google.com/', country: 'DE', region: 'Berlin', city: 'Berlin' },
    { ts: ago(day + 28), visitor: 'v1', path: '/pricing', country: 'DE', region: 'Berlin', city: 'Berlin' },
    { ts: ago(day + 27), visitor: 'v1', name: 'Signup', path: '/pricing', value_cents: 1250, country: 'DE', region: 'Berlin', city: 'Berlin' },
    { ts: ago(day + 26), visitor: 'v1', name: 'exit_link', path: '/pricing', link: 'https://github.com/tally', country: 'DE', region: 'Berlin', city: 'Berlin' },
    // Referred by an AI assistant, on a phone; downloads a file.
    { ts: ago(2 * day), visitor: 'v2', path: '/docs', referrer: 'https://chatgpt.com/', user_agent: IPHONE, country: 'US', region: 'California', city: 'San Francisco' },
    { ts: ago(2 * day - 1), visitor: 'v2', name: 'file_download', path: '/docs', link: `https://${domain}/files/guide.pdf`, user_agent: IPHONE, country: 'US', region: 'California', city: 'San Francisco' },
    // A one-page bounce.
    { ts: ago(3 * day), visitor: 'v3', path: '/blog', user_agent: FIREFOX, country: 'FR', region: 'Île-de-France', city: 'Paris' },
    // Visitors on the site now (realtime).
    { ts: ago(2), visitor: 'v4', path: '/', country: 'DE', region: 'Berlin', city: 'Berlin' },
    { ts: ago(1), visitor: 'v5', path: '/pricing', user_agent: FIREFOX, country: 'US', region: 'California', city: 'San Francisco' },
    // An AI crawler.
    { ts: ago(day), visitor: 'bot', path: '/docs', user_agent: GPTBOT, ip: '20.15.240.64' },
    { ts: ago(day - 1), visitor: 'bot', path: '/pricing', user_agent: GPTBOT, ip: '20.15.240.64' },
  ];
}

async function importVisits(siteId: string, domain: string): Promise<void> {
  const out = await svc.admin<{ rejected: number; errors: unknown[] }>('events import', { site: siteId }, toNdjson(domain, visits(domain)));
  if (out.rejected) throw new Error('fixture lines rejected: ' + JSON.stringify(out.errors));
  // A payment of visitor v1, so revenue figures are not all zero.
  await svc.running.ctx.store.insert('payments', [{
    site_id: siteId, provider: 'stripe', payment_id: 'pi_openapi', visitor_id: visitorIdFor(siteId, 'v1'), session_id: '0',
    amount_cents: 4999, refunded_cents: 0, currency: 'USD', status: 'succeeded', paid_at: isoToCh(ago(24 * 60 + 20)), version: 1, is_deleted: 0,
  }]);
}

/** Search-console rows Google will hand over once the site is connected. */
function consoleRows(property: string, domain: string): void {
  const day = (n: number) => shiftDate(consoleDate(Date.now()), -n);
  google.rows(property).push(
    { date: day(2), query: 'tally', page: `https://${domain}/`, clicks: 10, impressions: 100, position: 2 },
    { date: day(2), query: 'tally', page: `https://${domain}/pricing`, clicks: 3, impressions: 40, position: 4.5 },
    { date: day(3), query: 'web analytics', page: `https://${domain}/docs`, clicks: 1, impressions: 300, position: 11.25 },
  );
}

beforeAll(async () => {
  google = await startGoogleDouble();
  svc = await startTestService({ TALLY_GOOGLE_API_URL: google.url, TALLY_RATE_LIMIT_PER_MINUTE: '100000' });
  const res = await svc.api('GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;

  // Site 1 holds the traffic; site 2 stays empty (no events, no board, no widget, no connection).
  t = await svc.tenant({ scopes: [...ALL_SCOPES], sites: 2 });
  tokens.owner = t.token;
  tokens.reader = (await t.key({ scopes: ['analytics:read'] })).token;
  const revoked = await t.key();
  await svc.admin('key revoke', { key: revoked.id });
  tokens.revoked = revoked.token;
  const other = await svc.tenant();
  Object.assign(ids, {
    siteId: t.siteId, emptySiteId: t.siteIds[1], foreignSiteId: other.siteId, foreignDomain: other.domain, ownerId: t.userId,
    unknownId: randomUUID(), provider: 'search_console',
  });
  ids.memberId = (await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'member@example.com', role: 'member' })).id;
  await importVisits(t.siteId, t.domain);

  // A note whose author has left the team: its author_id is null.
  const leaver = await svc.admin<{ id: string }>('user create', { org: t.orgId, email: 'leaver@example.com', role: 'admin' });
  const note = await svc.api('POST', `/sites/${t.siteId}/notes`, {
    token: (await t.key({ scopes: ['notes:write'], userId: leaver.id })).token,
    body: { body: 'Launched before leaving', occurred_at: ago(60), granularity: 'minute' },
  });
  expect(note.status).toBe(201);
  await svc.admin('user remove', { org: t.orgId, user: leaver.id });

  const account = google.serviceAccount('openapi');
  ids.property = `sc-domain:${t.domain}`;
  google.grant(account.client_email, ids.property);
  ids.serviceAccount = JSON.stringify(account);
  consoleRows(ids.property, t.domain);
}, 120_000);
afterAll(async () => {
  await svc.stop();
  await google.close();
});

// ---------------------------------------------------------------------------------------------
// The cases: every operation of the document, its successes and its refusals, in the order they run.

interface Case {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The documented path; `{name}` is filled from `params`, else from `ids`. */
  path: string;
  /** Path parameters: a name in `ids`, or the value itself. */
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown | (() => unknown);
  /** A body sent as is, with its own Content-Type. */
  raw?: { text: string; type: string };
  as?: Caller;
  /** Over plain HTTP. */
  plain?: boolean;
  status: number;
  /** The error code, for refusals. */
  code?: string;
  /** Keep `data.id` under this name in `ids`. */
  keep?: string;
  /** What has to happen first (a worker's turn, a provider failing). */
  arrange?: () => Promise<unknown> | unknown;
}

const WEEK = { period: 'last7d' };
const MONTH = { period: 'last30d' };
const revenueGoal = () => ({ site_id: ids.siteId, name: 'Signup', kind: 'event', event_name: 'Signup', revenue_signal: true });
const searchConnect = () => ({ property: ids.property, service_account: ids.serviceAccount });
const connected = () => backfillState(svc, t, 'completed');
const onEmptySite = (path: string, params: Record<string, string> = {}): Case =>
  ({ method: 'GET', path, params: { siteId: 'emptySiteId', ...params }, query: WEEK, status: 200 });
const breakdown = (dimension: string): Case => ({ method: 'GET', path: '/sites/{siteId}/breakdowns/{dimension}', params: { dimension }, query: WEEK, status: 200 });

const CASES: Case[] = [
  // Sites and settings.
  { method: 'GET', path: '/sites', status: 200 },
  { method: 'POST', path: '/sites', body: { domain: 'new-site.example.com', name: 'New site', timezone: 'Europe/Berlin', currency: 'EUR' }, status: 201 },
  { method: 'POST', path: '/sites', body: () => ({ domain: ids.foreignDomain }), status: 409, code: 'conflict' },
  { method: 'GET', path: '/sites/{siteId}/settings', status: 200 },
  {
    method: 'PATCH', path: '/sites/{siteId}/settings', status: 200,
    body: { name: 'Main site', excluded_paths: ['admin/*'], excluded_countries: ['cn'], excluded_hostnames: ['staging.example.com'], session_strategy: 'salted_hash' },
  },
  { method: 'PATCH', path: '/sites/{siteId}/settings', body: () => ({ domain: ids.foreignDomain }), status: 409, code: 'conflict' },
  { method: 'PATCH', path: '/sites/{siteId}/settings', body: { name: 'x'.repeat(200_000) }, status: 413, code: 'payload_too_large' },
  { method: 'PATCH', path: '/sites/{siteId}/settings', raw: { text: 'name=x', type: 'text/plain' }, status: 415, code: 'unsupported_media_type' },

  // Goals (before the reports, so the goal figures count the nominated goal).
  { method: 'POST', path: '/goals', body: revenueGoal, status: 201 },
  { method: 'POST', path: '/goals', body: () => ({ site_id: ids.siteId, name: 'Pricing page', kind: 'page', path_pattern: '/pricing' }), status: 201, keep: 'goalId' },
  { method: 'POST', path: '/goals', body: revenueGoal, status: 409, code: 'conflict' },
  { method: 'GET', path: '/sites/{siteId}/goals', status: 200 },

  // Reports.
  { method: 'GET', path: '/sites/{siteId}/overview', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/overview', query: { period: 'forever' }, status: 400, code: 'invalid_request' },
  { method: 'GET', path: '/sites/{siteId}/overview', query: { ...WEEK, from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' }, status: 400, code: 'invalid_request' },
  { method: 'GET', path: '/sites/{siteId}/timeseries', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/timeseries', query: { period: 'last24h', unit: 'hour', bots: 'included' }, status: 200 },
  ...DIMENSION_KEYS.map(breakdown),
  { method: 'GET', path: '/sites/{siteId}/breakdowns/{dimension}', params: { dimension: 'planet' }, status: 400, code: 'unknown_dimension' },
  { method: 'GET', path: '/sites/{siteId}/heatmap', query: { ...WEEK, tz: 'Europe/Berlin' }, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/engagement', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/realtime', status: 200 },
  { method: 'GET', path: '/sites/{siteId}/realtime/countries', status: 200 },
  { method: 'GET', path: '/sites/{siteId}/realtime/countries', query: { minutes: '361' }, status: 400, code: 'invalid_request' },
  { method: 'GET', path: '/sites/{siteId}/channel-quality', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/ai/series', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/ai/crawlers', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/ai/pages', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/ai/referrals', query: WEEK, status: 200 },
  // Over a site without events: rates over nothing, empty buckets.
  ...['overview', 'timeseries', 'heatmap', 'engagement', 'channel-quality', 'ai/series', 'ai/pages'].map((report) => onEmptySite(`/sites/{siteId}/${report}`)),
  onEmptySite('/sites/{siteId}/breakdowns/{dimension}', { dimension: 'channel' }),

  // Integrations, and the search reports over what the connection imported.
  { method: 'GET', path: '/sites/{siteId}/search/totals', query: MONTH, status: 200 }, // null: no connection yet
  { method: 'PUT', path: '/sites/{siteId}/integrations/{provider}', params: { provider: 'bing' }, body: {}, status: 404, code: 'not_found' },
  { method: 'POST', path: '/sites/{siteId}/integrations/{provider}/resync', status: 404, code: 'not_found' },
  { method: 'DELETE', path: '/sites/{siteId}/integrations/{provider}', status: 404, code: 'not_found' },
  { method: 'PUT', path: '/sites/{siteId}/integrations/{provider}', body: { property: 'sc-domain:nowhere.example' }, status: 400, code: 'invalid_request' },
  {
    method: 'PUT', path: '/sites/{siteId}/integrations/{provider}', body: searchConnect, status: 503, code: 'provider_unavailable',
    arrange: () => google.failNext(4, { path: '/webmasters/v3/sites/' }), // the client's try and its three retries
  },
  { method: 'PUT', path: '/sites/{siteId}/integrations/{provider}', body: searchConnect, status: 200 },
  { method: 'PUT', path: '/sites/{siteId}/integrations/{provider}', params: { provider: 'stripe' }, body: { secret_key: 'sk_test_abcdefghijkl' }, status: 409, code: 'conflict' },
  { method: 'GET', path: '/integrations', status: 200, arrange: connected },
  { method: 'GET', path: '/sites/{siteId}/search/totals', query: MONTH, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/search/terms', query: MONTH, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/search/term-pages', query: { ...MONTH, terms: 'tally\nweb analytics' }, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/search/term-pages', query: MONTH, status: 400, code: 'invalid_request' },
  { method: 'POST', path: '/sites/{siteId}/integrations/{provider}/resync', status: 202 },
  { method: 'GET', path: '/integrations', status: 200 }, // mid-import
  { method: 'DELETE', path: '/sites/{siteId}/integrations/{provider}', status: 200, arrange: connected },

  // Notes.
  { method: 'POST', path: '/sites/{siteId}/notes', body: { body: 'Pricing page redesign', occurred_at: ago(3 * 24 * 60) }, status: 201, keep: 'noteId' },
  { method: 'POST', path: '/sites/{siteId}/notes', body: () => ({ body: 'x', occurred_at: ago(0), site_id: ids.siteId }), status: 400, code: 'invalid_request' },
  { method: 'GET', path: '/sites/{siteId}/notes', status: 200 },
  { method: 'GET', path: '/sites/{siteId}/notes', query: WEEK, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/notes', as: 'reader', status: 403, code: 'forbidden' },
  { method: 'PATCH', path: '/sites/{siteId}/notes/{noteId}', body: { body: 'Pricing page redesign, v2' }, status: 200 },
  { method: 'PATCH', path: '/sites/{siteId}/notes/{noteId}', params: { noteId: 'unknownId' }, body: { body: 'x' }, status: 404, code: 'not_found' },
  { method: 'DELETE', path: '/sites/{siteId}/notes/{noteId}', status: 200 },
  { method: 'DELETE', path: '/sites/{siteId}/notes/{noteId}', status: 404, code: 'not_found' },

  // Funnels.
  {
    method: 'POST', path: '/sites/{siteId}/funnels', status: 201, keep: 'funnelId',
    body: { name: 'Signup', steps: [{ kind: 'view', value: '/' }, { kind: 'goal', match: 'equals', value: 'Signup' }, { kind: 'payment' }] },
  },
  { method: 'GET', path: '/sites/{siteId}/funnels', status: 200 },
  { method: 'GET', path: '/sites/{siteId}/funnels/{funnelId}', status: 200 },
  { method: 'GET', path: '/sites/{siteId}/funnels/{funnelId}/report', query: WEEK, status: 200 },
  { method: 'PATCH', path: '/sites/{siteId}/funnels/{funnelId}', body: { name: 'Signup (week)', window_seconds: 604800 }, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/funnels/{funnelId}', params: { funnelId: 'unknownId' }, status: 404, code: 'not_found' },
  { method: 'DELETE', path: '/sites/{siteId}/funnels/{funnelId}', status: 200 },
  {
    method: 'POST', path: '/sites/{siteId}/funnels', params: { siteId: 'emptySiteId' }, status: 201, keep: 'emptyFunnelId',
    body: { name: 'Nobody', steps: [{ kind: 'view', match: 'starts_with', value: '/shop' }, { kind: 'payment' }] },
  },
  { method: 'GET', path: '/sites/{siteId}/funnels/{funnelId}/report', params: { siteId: 'emptySiteId', funnelId: 'emptyFunnelId' }, status: 200 },

  // Alerts: fired by the evaluator over the visitors on the site now.
  { method: 'POST', path: '/sites/{siteId}/alerts', body: { name: 'Busy', trigger_type: 'visitors_spike', threshold: 1, window_minutes: 10 }, status: 201, keep: 'alertId' },
  {
    method: 'POST', path: '/sites/{siteId}/alerts', status: 201,
    body: { name: 'Signups', trigger_type: 'goal', goal_name: 'Signup', threshold_mode: 'percent_change', threshold: 50, subject: 'Signups moved', body: 'See the goals report.' },
  },
  { method: 'GET', path: '/sites/{siteId}/alerts', status: 200 },
  // Evaluated a minute on: an alert is first measured at the minute boundary after its creation.
  { method: 'GET', path: '/sites/{siteId}/alerts/{alertId}/firings', status: 200, arrange: () => evaluatedNextMinute() },
  { method: 'GET', path: '/sites/{siteId}/alerts/{alertId}', status: 200 },
  { method: 'PATCH', path: '/sites/{siteId}/alerts/{alertId}', body: { threshold: 2.5, enabled: false }, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/alerts/{alertId}/firings', params: { alertId: 'unknownId' }, status: 404, code: 'not_found' },
  { method: 'DELETE', path: '/sites/{siteId}/alerts/{alertId}', status: 200 },

  // Share board and widget.
  { method: 'GET', path: '/sites/{siteId}/share', status: 404, code: 'not_found' },
  { method: 'PUT', path: '/sites/{siteId}/share', body: { label: 'Our traffic', pages: true, revenue: true, max_range_days: 90, expires_in_days: 30 }, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/share', status: 200 },
  { method: 'PUT', path: '/sites/{siteId}/share', body: { expires_in_days: null }, status: 200 },
  { method: 'DELETE', path: '/sites/{siteId}/share', status: 200 },
  { method: 'GET', path: '/sites/{siteId}/share', status: 200 }, // active: false
  { method: 'DELETE', path: '/sites/{siteId}/share', status: 200 }, // already off: answered as it is
  { method: 'DELETE', path: '/sites/{siteId}/share', params: { siteId: 'emptySiteId' }, status: 404, code: 'not_found' },
  { method: 'GET', path: '/sites/{siteId}/widget', status: 404, code: 'not_found' },
  { method: 'PUT', path: '/sites/{siteId}/widget', body: { type: 'analytics', metric: 'visitors', enabled: true, chart_style: 'area', publish_revenue: true }, status: 200 },
  { method: 'GET', path: '/sites/{siteId}/widget', status: 200 },
  { method: 'PUT', path: '/sites/{siteId}/widget', params: { siteId: 'emptySiteId' }, body: { enabled: true }, status: 409, code: 'no_events' },
  { method: 'PUT', path: '/sites/{siteId}/widget', params: { siteId: 'emptySiteId' }, body: {}, status: 200 },
  { method: 'DELETE', path: '/sites/{siteId}/widget', params: { siteId: 'emptySiteId' }, status: 200 }, // leaves site 2 without one again
  { method: 'DELETE', path: '/sites/{siteId}/widget', params: { siteId: 'emptySiteId' }, status: 404, code: 'not_found' },

  // Team.
  { method: 'GET', path: '/team', status: 200 },
  { method: 'PATCH', path: '/team/members/{userId}/sites', params: { userId: 'memberId' }, body: () => ({ site_ids: [ids.siteId, ids.siteId] }), status: 200 },
  { method: 'GET', path: '/team', status: 200 },
  { method: 'PATCH', path: '/team/members/{userId}/sites', params: { userId: 'memberId' }, body: { site_ids: [] }, status: 200 },
  { method: 'PATCH', path: '/team/members/{userId}/sites', params: { userId: 'ownerId' }, body: { site_ids: [] }, status: 409, code: 'last_owner' },
  { method: 'PATCH', path: '/team/members/{userId}/sites', params: { userId: 'memberId' }, body: () => ({ site_ids: [ids.foreignSiteId] }), status: 400, code: 'invalid_request' },
  { method: 'PATCH', path: '/team/members/{userId}/sites', params: { userId: 'unknownId' }, body: { site_ids: [] }, status: 404, code: 'not_found' },

  // Goals, last: deleting one.
  { method: 'DELETE', path: '/sites/{siteId}/goals/{goalId}', status: 200 },
  { method: 'DELETE', path: '/sites/{siteId}/goals/{goalId}', status: 404, code: 'not_found' },

  // Who may call: no key, a garbage or revoked key, a key without the scope or the site, plain HTTP.
  { method: 'GET', path: '/sites', as: 'none', status: 401, code: 'invalid_credential' },
  { method: 'GET', path: '/sites/{siteId}/overview', as: 'garbage', status: 401, code: 'invalid_credential' },
  { method: 'POST', path: '/sites/{siteId}/notes', as: 'revoked', body: { body: 'x', occurred_at: ago(0) }, status: 401, code: 'invalid_credential' },
  { method: 'PUT', path: '/sites/{siteId}/widget', as: 'reader', body: { enabled: false }, status: 403, code: 'forbidden' },
  { method: 'GET', path: '/sites/{siteId}/overview', params: { siteId: 'foreignSiteId' }, status: 403, code: 'forbidden' },
  { method: 'GET', path: '/sites', plain: true, status: 403, code: 'https_required' },
];

// ---------------------------------------------------------------------------------------------
// Validation: the documented schema with its $refs resolved and its objects closed.

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** `#/components/...` references replaced by what they point at (the document has no cycles). */
function resolveRefs(schema: any): any {
  if (Array.isArray(schema)) return schema.map(resolveRefs);
  if (!schema || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') {
    const target = schema.$ref.replace(/^#\//, '').split('/').reduce((node: any, key: string) => node?.[key], doc);
    if (!target) throw new Error(`unresolved ${schema.$ref}`);
    return resolveRefs(target);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolveRefs(v)]));
}

/** An object schema that lists its properties and says nothing of others admits no others. */
function closed(schema: any): any {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'properties'
    ? Object.fromEntries(Object.entries(v as object).map(([name, s]) => [name, closed(s)]))
    : closed(v)]));
  if (out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

function documentedSchema(method: string, path: string, status: number): any {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  const response = op.responses[String(status)];
  if (!response) {
    throw new Error(`${method} ${path} answered ${status}, which it does not document (documented: ${Object.keys(op.responses).join(', ')})`);
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} documents no JSON body for ${status}`);
  return resolveRefs(schema);
}

/** "METHOD path status" of the answers that matched their documented schema. */
const matched = new Set<string>();
/** Fields under `data` and `meta` that answers carried, by "METHOD path status". */
const seen = new Map<string, Set<string>>();

function fieldsIn(schema: any, value: any, at: string, out: Set<string>): void {
  if (value === null || typeof value !== 'object' || !schema) return;
  if (Array.isArray(value)) {
    for (const item of value) fieldsIn(schema.items, item, `${at}[]`, out);
    return;
  }
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    if (!(name in value)) continue;
    out.add(`${at}.${name}`);
    fieldsIn(s, value[name], `${at}.${name}`, out);
  }
}

function documentedFields(schema: any, at: string, out: Set<string>): void {
  if (!schema || typeof schema !== 'object') return;
  if (schema.items) documentedFields(schema.items, `${at}[]`, out);
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    out.add(`${at}.${name}`);
    documentedFields(s, `${at}.${name}`, out);
  }
}

/** Fails unless the answer's status is documented for the operation and its body matches that schema. */
function expectDocumented(method: string, path: string, res: HttpResult): void {
  const key = `${method} ${path} ${res.status}`;
  const schema = documentedSchema(method, path, res.status);
  if (!validators.has(key)) validators.set(key, ajv.compile(closed(schema)));
  const validate = validators.get(key)!;
  if (!seen.has(key)) seen.set(key, new Set());
  for (const part of ['data', 'meta']) fieldsIn(schema.properties?.[part], res.body?.[part], part, seen.get(key)!);
  if (!validate(res.body)) {
    const errors = validate.errors!.map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
    throw new Error(`${key}: the answer does not match the documented schema:\n  ${errors.join('\n  ')}\nbody: ${res.text.slice(0, 2000)}`);
  }
  matched.add(key);
}

async function call(c: Case): Promise<HttpResult> {
  const path = c.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const given = c.params?.[name];
    const value = given !== undefined ? ids[given] ?? given : ids[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const qs = c.query ? '?' + new URLSearchParams(c.query).toString() : '';
  const body = typeof c.body === 'function' ? c.body() : c.body;
  const opts = {
    token: c.as === 'none' ? undefined : tokens[c.as ?? 'owner'],
    ...(c.raw ? { raw: c.raw.text, headers: { 'content-type': c.raw.type } } : { body }),
  };
  return c.plain ? request(c.method, `${svc.plainBase}/api/v1${path}${qs}`, opts) : svc.api(c.method, path + qs, opts);
}

const title = (c: Case) =>
  `${c.method} ${c.path}${c.params ? ' ' + JSON.stringify(c.params) : ''}${c.query ? '?' + new URLSearchParams(c.query) : ''}` +
  `${c.as ? ` as ${c.as}` : ''}${c.plain ? ' over plain HTTP' : ''} → ${c.status}${c.code ? ' ' + c.code : ''}`;

test.each(CASES.map((c) => [title(c), c] as const))('%s', async (_title, c) => {
  await c.arrange?.();
  const res = await call(c);
  expectDocumented(c.method, c.path, res);
  if (res.status !== c.status) throw new Error(`expected ${c.status}, answered ${res.status}: ${res.text.slice(0, 1000)}`);
  if (c.code) expect(res.body.error.code).toBe(c.code);
  if (c.keep) ids[c.keep] = res.body.data.id;
}, 60_000);

// ---------------------------------------------------------------------------------------------
// Coverage: what the cases above must have shown.

const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`));
const success = (op: string) => Object.keys(doc.paths[op.split(' ')[1]][op.split(' ')[0].toLowerCase()].responses).filter((s) => s.startsWith('2'));

test('every operation of the document was called and answered its documented success, as documented', () => {
  const missing = operations().flatMap((op) => success(op).map((s) => `${op} ${s}`)).filter((k) => !matched.has(k));
  expect(missing).toEqual([]);
});

test('every breakdown dimension was called', () => {
  const called = new Set(CASES.filter((c) => c.path.endsWith('{dimension}') && c.status === 200).map((c) => c.params!.dimension));
  expect([...called].sort()).toEqual([...DIMENSION_KEYS].sort());
});

test('every field documented under data and meta appeared in some answer', () => {
  const never: string[] = [];
  for (const op of operations()) {
    for (const status of success(op)) {
      const [method, path] = op.split(' ');
      const documented = new Set<string>();
      const schema = documentedSchema(method, path, Number(status));
      for (const part of ['data', 'meta']) documentedFields(schema.properties?.[part], part, documented);
      const got = seen.get(`${op} ${status}`) ?? new Set();
      never.push(...[...documented].filter((f) => !got.has(f)).map((f) => `${op} ${status} ${f}`));
    }
  }
  expect(never).toEqual([]);
});

test('the refusals shown cover 400, 401, 403, 404, 409, 413, 415 and 503, each with its documented error body', () => {
  const statuses = new Set([...matched].map((k) => Number(k.split(' ').pop())));
  for (const s of [400, 401, 403, 404, 409, 413, 415, 503]) expect(statuses).toContain(s);
});
