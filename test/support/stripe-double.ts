import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for api.stripe.com that speaks its wire format for what Tally calls: bearer-key
 * auth (401/403 as Stripe answers them), the list endpoints for charges and subscriptions with
 * `limit`, `starting_after`, `status=all` and `expand[]=data.payment_intent`, one charge by id
 * (`expand[]=payment_intent`; 404 `resource_missing` for an unknown id), and disputes (`charge=`
 * lists one charge's; a charge with disputes reads `disputed: true`). The official client is
 * pointed at it with TALLY_STRIPE_API_URL. Tests add and edit objects, revoke keys and inject 500s.
 */
export interface DoubleCharge {
  id: string; amount: number; amount_refunded?: number; currency?: string; status?: 'succeeded' | 'pending' | 'failed';
  created: number; metadata?: Record<string, string>; intent_metadata?: Record<string, string>; disputes?: DoubleDispute[];
  /** Manual capture: false for an authorisation not captured yet (Stripe still says `succeeded`). */
  captured?: boolean;
  /** A partial capture's amount; by default all of a captured charge, 0 otherwise. */
  amount_captured?: number;
}
export interface DoubleDispute {
  id: string; amount: number; status: 'needs_response' | 'under_review' | 'won' | 'lost' | 'warning_closed';
}
export interface DoubleSubscription {
  id: string; created: number; status: string; ended_at?: number | null; canceled_at?: number | null;
}

export interface StripeDouble {
  url: string;
  keys: Set<string>;
  /** Keys that authenticate but may not read (a restricted key without the permission). */
  readOnlyDenied: Set<string>;
  /** Keys that may read charges but not disputes. */
  disputesDenied: Set<string>;
  charges: DoubleCharge[];
  /** Keys of other Stripe accounts, each seeing its own charges instead of `charges`. */
  accounts: Map<string, DoubleCharge[]>;
  subscriptions: DoubleSubscription[];
  /** The next n requests (to `pathname` only, when given) answer 500 (or 429: Stripe's rate limit). */
  failNext(n: number, pathname?: string, status?: 500 | 429): void;
  /**
   * The next request to `pathname` reads its answer at once but is answered only when the returned
   * function is called: a reader that is slow between reading Stripe and writing what it read.
   */
  holdNext(pathname: string): () => void;
  requests: string[];
  close(): Promise<void>;
}

function error(res: http.ServerResponse, status: number, type: string, message: string, code?: string) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_double' });
  res.end(JSON.stringify({ error: { type, message, ...(code ? { code } : {}) } }));
}

function chargeObject(c: DoubleCharge, expandIntent: boolean) {
  const intentId = `pi_${c.id.slice(3)}`;
  const captured = c.captured ?? (c.status ?? 'succeeded') === 'succeeded';
  return {
    id: c.id, object: 'charge', amount: c.amount, amount_refunded: c.amount_refunded ?? 0, currency: c.currency ?? 'usd',
    captured, amount_captured: c.amount_captured ?? (captured ? c.amount : 0),
    status: c.status ?? 'succeeded', created: c.created, metadata: c.metadata ?? {}, livemode: false, disputed: Boolean(c.disputes?.length),
    payment_intent: expandIntent ? { id: intentId, object: 'payment_intent', metadata: c.intent_metadata ?? {} } : intentId,
  };
}

function subscriptionObject(s: DoubleSubscription) {
  return {
    id: s.id, object: 'subscription', created: s.created, start_date: s.created, status: s.status,
    ended_at: s.ended_at ?? null, canceled_at: s.canceled_at ?? null, items: { object: 'list', data: [] }, metadata: {},
  };
}

function disputeObject(d: DoubleDispute, c: DoubleCharge) {
  return { id: d.id, object: 'dispute', amount: d.amount, currency: c.currency ?? 'usd', status: d.status, charge: c.id, created: c.created, livemode: false };
}

/** Stripe lists newest first; `starting_after` is the last id of the previous page. */
function listPage<T extends { id: string; created: number }>(all: T[], q: URLSearchParams, url: string, render: (x: T) => object) {
  const sorted = [...all].sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
  const after = q.get('starting_after');
  const from = after ? sorted.findIndex((x) => x.id === after) + 1 : 0;
  const limit = Math.min(100, Number(q.get('limit') ?? 10));
  const data = sorted.slice(from, from + limit);
  return { object: 'list', url, has_more: from + limit < sorted.length, data: data.map(render) };
}

export async function startStripeDouble(): Promise<StripeDouble> {
  let failures = 0;
  const holds = new Map<string, Promise<void>>();
  let failing: string | undefined;
  let failStatus = 500;
  const double = {} as StripeDouble;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    double.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (failures > 0 && (failing === undefined || failing === url.pathname)) {
      failures--;
      return failStatus === 429
        ? error(res, 429, 'invalid_request_error', 'Too many requests', 'rate_limit')
        : error(res, 500, 'api_error', 'Injected failure');
    }
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!double.keys.has(key)) return error(res, 401, 'invalid_request_error', 'Invalid API Key provided');
    if (double.readOnlyDenied.has(key) || (double.disputesDenied.has(key) && url.pathname === '/v1/disputes')) return error(res, 403, 'invalid_request_error', 'The provided key does not have the required permissions');
    const charges = double.accounts.get(key) ?? double.charges;
    const expanded = (path: string) => [...url.searchParams.entries()].some(([k, v]) => k.startsWith('expand') && v === path);
    const one = /^\/v1\/charges\/([^/]+)$/.exec(url.pathname);
    let body: object | undefined;
    if (req.method === 'GET' && url.pathname === '/v1/charges') {
      body = listPage(charges, url.searchParams, '/v1/charges', (c) => chargeObject(c, expanded('data.payment_intent')));
    } else if (req.method === 'GET' && one) {
      const charge = charges.find((c) => c.id === decodeURIComponent(one[1]));
      if (!charge) return error(res, 404, 'invalid_request_error', `No such charge: '${one[1]}'`, 'resource_missing');
      body = chargeObject(charge, expanded('payment_intent'));
    } else if (req.method === 'GET' && url.pathname === '/v1/disputes') {
      const of = url.searchParams.get('charge');
      const disputes = charges.filter((c) => !of || c.id === of)
        .flatMap((c) => (c.disputes ?? []).map((d) => ({ id: d.id, created: c.created, object: disputeObject(d, c) })));
      body = listPage(disputes, url.searchParams, '/v1/disputes', (d) => d.object);
    } else if (req.method === 'GET' && url.pathname === '/v1/subscriptions') {
      body = listPage(double.subscriptions, url.searchParams, '/v1/subscriptions', subscriptionObject);
    }
    if (!body) return error(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname})`);
    const answer = JSON.stringify(body);
    const held = holds.get(url.pathname);
    holds.delete(url.pathname);
    void (held ?? Promise.resolve()).then(() => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_double' });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  Object.assign(double, {
    url: `http://127.0.0.1:${port}`, keys: new Set<string>(), readOnlyDenied: new Set<string>(), disputesDenied: new Set<string>(), charges: [], accounts: new Map(), subscriptions: [], requests: [],
    failNext: (n: number, pathname?: string, status = 500) => { failures = n; failing = pathname; failStatus = status; },
    holdNext(pathname: string) {
      let release!: () => void;
      holds.set(pathname, new Promise<void>((resolve) => { release = resolve; }));
      return () => release();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
  return double;
}
