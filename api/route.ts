import { isUtf8 } from 'node:buffer';
import express, { type Request, type Response, type Router } from 'express';
import { z, type ZodType } from 'zod';
import '../core/zod-messages';
import type { Principal, Scope, Site } from '../core/domain';
import { AppError, invalidRequest, notFound } from '../core/errors';
import { isUuid } from '../core/ids';
import { MALFORMED_TEXT, malformedTextAt } from '../core/text';
import { requireScope, requireSite } from './auth';
import type { AppContext } from './context';
import { ErrorBody, registry } from './openapi';

/**
 * The one way an API route is written: declare scope, site reach, zod schemas and a handler that
 * returns `{data, meta}`. The wrapper checks scope and reach before anything else (tenancy first),
 * parses query and body (unknown body fields refused), wraps the envelope and registers the route in
 * the OpenAPI document, so the document can never drift from what is served.
 */
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface HandlerContext<Q, B> {
  app: AppContext;
  principal: Principal;
  /** Present on routes whose path holds {siteId}; reach already checked. */
  site: Site;
  query: Q;
  body: B;
  params: Record<string, string>;
  req: Request;
  res: Response;
}

export interface RouteResult {
  data: unknown;
  meta?: Record<string, unknown>;
  status?: number;
}

export interface RouteSpec<Q extends ZodType, B extends ZodType> {
  method: Method;
  /** OpenAPI style, relative to /api/v1: '/sites/{siteId}/notes'. */
  path: string;
  summary: string;
  tag?: string;
  scope?: Scope;
  /**
   * A second scope the route needs: publishing a share board or widget shows the site's analytics
   * to anyone with the link, so settings:write alone must not publish what analytics:read guards.
   */
  alsoScope?: Scope;
  /**
   * The route needs a key that reaches every site (creating a site): checked with the scopes, before
   * the body is read, so a confined key is told 403 whatever it sent (docs/AUTH.md order).
   */
  everySite?: { refusal: string };
  query?: Q;
  body?: B;
  /** The `data` payload schema, for the document. */
  response?: ZodType;
  /**
   * The `meta` fields the handler returns (`page`, `range`, ...), for the document. `site_id` is
   * added on routes whose path holds {siteId}, as the wrapper adds it to the answer.
   */
  meta?: Record<string, ZodType>;
  /** The success status, for the document (the handler sets it on the response with `status`). */
  status?: number;
  /**
   * Refusals of this route beyond the ones every route documents (400, 401, 403, 429, a path id's
   * 404, a body's 413 and 415), by status: `code: when`. Only for the document.
   */
  refusals?: Readonly<Record<number, string>>;
  /** Path parameters' schemas for the document, where a plain string or uuid says too little (a closed set). */
  params?: Record<string, ZodType>;
  handler(ctx: HandlerContext<z.infer<Q>, z.infer<B>>): Promise<RouteResult>;
}

export type RouteModule = (r: RouteRegistrar) => void;

export function formatZodError(error: z.ZodError, where: 'query' | 'body'): AppError {
  const first = error.issues[0];
  const name = first?.path.length ? first.path.join('.') : where;
  const message =
    first?.code === 'unrecognized_keys'
      ? `${first.path.length ? name : where}: unexpected field(s) ${first.keys.map((k) => `"${k}"`).join(', ')}`
      : `${name}: ${first?.message ?? 'invalid'}`;
  return invalidRequest(message, { issues: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
}

/**
 * Query parameters as the strings they must be: a repeated one arrives as an array and is refused in
 * the same words on every route and public feed (zod's own words called a correct value wrong:
 * `bots=included&bots=included` read "bots: must be excluded or included").
 */
export function singleValued(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = v;
    else if (v !== undefined) throw invalidRequest(`${k}: give this parameter once, as a single value`);
  }
  return out;
}

/** A body whose schema depends on the path (an integration's provider), checked like a route's own body. */
export const parseBody = <T extends ZodType>(schema: T, value: unknown): z.infer<T> => parse(schema, value, 'body');

function parse<T extends ZodType>(schema: T | undefined, value: unknown, where: 'query' | 'body'): z.infer<T> {
  if (!schema) return undefined as z.infer<T>;
  const r = schema.safeParse(value);
  if (!r.success) throw formatZodError(r.error, where);
  return r.data;
}

const expressPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

/** What the auth matrix (and anything else that must cover every route) needs to know of a route. */
export interface RouteInfo {
  method: Method;
  path: string;
  scope?: Scope;
  alsoScope?: Scope;
  everySite?: boolean;
}

// Keyed by "method path": a process may build several apps (tests), each registering the same routes.
const registered = new Map<string, RouteInfo>();

/** Every API route registered so far, in registration order. */
export function registeredRoutes(): RouteInfo[] {
  return [...registered.values()];
}

/** Each route's path as a pattern (`{siteId}` is one segment), made once at registration. */
const pathPatterns = new Map<string, RegExp>();

/**
 * A route's path as Express matches it: `{siteId}` is one segment, a trailing slash is allowed, and
 * case counts (the routers are case-sensitive, so `GET /SITES` is a 404, and so is `DELETE /SITES`).
 */
const pathPattern = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`);

/** The methods of the routes at `path` (under /api/v1), upper case; none for a path no route has. */
export function methodsAt(path: string): string[] {
  const methods = registeredRoutes().filter((r) => pathPatterns.get(r.path)!.test(path)).map((r) => r.method.toUpperCase());
  return [...new Set(methods)];
}

const WRITE_503 = 'overloaded: another process kept the row busy (server mode); see Retry-After';

/** Any route reads storage: in server mode a ClickHouse server that does not answer is a 503, not a 500. */
const STORAGE_503 = 'storage_unavailable: the ClickHouse server does not answer (server mode); see Retry-After';

/** The 503 a route can answer, its own refusal first, then a busy row (writes), then storage. */
function unavailable(own: string | undefined, isWrite: boolean): string {
  return [own, isWrite ? WRITE_503 : undefined, STORAGE_503].filter((s) => s !== undefined).join('; ');
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: z.object({ error: ErrorBody }) } },
});

function register(spec: RouteSpec<ZodType, ZodType>): void {
  const id = `${spec.method} ${spec.path}`;
  if (registered.has(id)) return;
  registered.set(id, { method: spec.method, path: spec.path, scope: spec.scope, alsoScope: spec.alsoScope, everySite: !!spec.everySite });
  if (!pathPatterns.has(spec.path)) pathPatterns.set(spec.path, pathPattern(spec.path));
  const params = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const isWrite = spec.method !== 'get';
  const envelope = z.object({
    data: spec.response ?? z.unknown(),
    meta: z.object({ ...(params.includes('siteId') ? { site_id: z.string().uuid() } : {}), ...spec.meta }),
    ...(isWrite ? { error: ErrorBody.optional() } : {}),
  });
  registry.registerPath({
    method: spec.method,
    path: spec.path,
    summary: spec.summary + (spec.scope ? ` (needs ${spec.scope}${spec.alsoScope ? ` and ${spec.alsoScope}` : ''})` : ''),
    tags: spec.tag ? [spec.tag] : undefined,
    request: {
      params: params.length
        ? z.object(Object.fromEntries(params.map((p) => [p, spec.params?.[p] ?? (p.endsWith('Id') ? z.string().uuid() : z.string())])))
        : undefined,
      query: spec.query instanceof z.ZodObject ? spec.query : undefined,
      body: spec.body ? { content: { 'application/json': { schema: spec.body } } } : undefined,
    },
    responses: {
      [spec.status ?? 200]: { description: 'OK', content: { 'application/json': { schema: envelope } } },
      400: errorResponse('invalid_request: the message names the parameter or field'),
      401: errorResponse('invalid_credential: missing, malformed, revoked or expired key'),
      403: errorResponse('forbidden: the key lacks the scope or does not reach the site'),
      ...(params.some((p) => p !== 'siteId' && p.endsWith('Id')) ? { 404: errorResponse('not_found: no such resource on this site') } : {}),
      // Every write reads (or refuses) a body, and edits rows by turn with other processes (server mode).
      ...(isWrite ? {
        413: errorResponse('payload_too_large: the body is over the limit'),
        415: errorResponse('unsupported_media_type: the body is not Content-Type: application/json'),
      } : {}),
      429: errorResponse('rate_limited: see Retry-After'),
      ...Object.fromEntries(Object.entries(spec.refusals ?? {}).filter(([status]) => status !== '503').map(([status, when]) => [status, errorResponse(when)])),
      503: errorResponse(unavailable(spec.refusals?.['503'], isWrite)),
    },
  });
}

/**
 * What `find` makes of a row a path id names (a funnel, an alert, a note of the route's site), or 404.
 * `find` runs only on a well-formed uuid: a malformed id names nothing, so it is 404 like an unknown one.
 */
export async function byPathId<T>(id: string, what: string, find: (id: string) => Promise<T | undefined>): Promise<T> {
  const found = isUuid(id) ? await find(id) : undefined;
  if (found === undefined) throw notFound(what);
  return found;
}

export class RouteRegistrar {
  constructor(private readonly router: Router, private readonly app: AppContext) {}

  route<Q extends ZodType = ZodType, B extends ZodType = ZodType>(spec: RouteSpec<Q, B>): void {
    register(spec as unknown as RouteSpec<ZodType, ZodType>);
    const app = this.app;
    this.router[spec.method](expressPath(spec.path), async (req: Request, res: Response, next) => {
      try {
        const principal = res.locals.principal as Principal;
        requireScope(principal, spec.scope);
        requireScope(principal, spec.alsoScope);
        if (spec.everySite && principal.sites !== 'all') throw new AppError(403, 'forbidden', spec.everySite.refusal);
        const site = req.params.siteId !== undefined ? await requireSite(app.repos, principal, String(req.params.siteId)) : undefined;
        const query = spec.query ? parse(spec.query, singleValued(req.query), 'query') : (undefined as z.infer<Q>);
        if (spec.body) await readBody(req, res);
        else if (spec.method !== 'get') await refuseBody(req, res);
        const body = parse(spec.body, spec.body ? bodyOf(req) : undefined, 'body');
        const params = req.params as Record<string, string>;
        const result = await spec.handler({ app, principal, site: site as Site, query, body, params, req, res });
        const meta = { ...(site ? { site_id: site.id } : {}), ...(result.meta ?? {}) };
        res.status(result.status ?? spec.status ?? 200).json({ data: result.data, meta });
      } catch (err) {
        next(err);
      }
    });
  }
}

const jsonParser = express.json({
  limit: '100kb',
  strict: true,
  // The parser would decode bad bytes to U+FFFD and store them; a body that is not UTF-8 is refused
  // instead, as event bodies and import lines are.
  verify: (_req, _res, buf) => {
    if (!isUtf8(buf)) throw invalidRequest('body: is not valid UTF-8');
  },
});

/** Whether the request carries a body at all (a length above 0, or chunked). */
const hasBody = (req: Request) => Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/**
 * Reads a write's JSON body. Runs after scope and reach (docs/AUTH.md: tenancy first), so a key that
 * may not write here is told 403 whatever it sent; a body that is not JSON is 415 before parsing.
 */
function readBody(req: Request, res: Response): Promise<void> {
  if (hasBody(req) && !req.is('application/json')) {
    return Promise.reject(new AppError(415, 'unsupported_media_type', 'Request bodies must be Content-Type: application/json.'));
  }
  return new Promise((resolve, reject) => jsonParser(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
}

/**
 * A write that takes no body (re-sync, deletes) refuses one rather than ignoring it: a caller who
 * sent fields expected them to matter, and re-sync clears data. Nothing, or `{}` (what many clients
 * send by default), is accepted.
 */
async function refuseBody(req: Request, res: Response): Promise<void> {
  if (!hasBody(req)) return;
  await readBody(req, res);
  const b = req.body as unknown;
  const empty = b === undefined || (typeof b === 'object' && b !== null && !Array.isArray(b) && Object.keys(b).length === 0);
  if (!empty) throw invalidRequest('body: this endpoint takes no body');
}

/**
 * A write body must be a JSON object; an empty body counts as `{}`. Its text must be storable: an
 * unpaired surrogate escape (`"\ud800"`) has no UTF-8 form, so ClickHouse refused the row (a 500) or,
 * for a lone low half, stored U+FFFD where the answer had echoed the text; refused by name as on
 * the collection endpoint.
 */
function bodyOf(req: Request): unknown {
  const b = req.body as unknown;
  if (b === undefined) return {};
  // Every write body is an object: said in the words a malformed body gets (zod's read "expected object, received array").
  if (Array.isArray(b)) throw invalidRequest('body: must be a JSON object, not an array');
  // Named as the schema's refusals are (`field: problem`), so details.issues holds it too.
  const at = malformedTextAt(b, '', { dotted: true });
  if (at !== null) throw invalidRequest(`${at || 'body'}: ${MALFORMED_TEXT}`);
  return b;
}
