import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, methodNotAllowed, notFound } from '../core/errors';
import { logger } from '../core/logger';
import { authenticate, authenticateKnown } from './auth';
import type { AppContext } from './context';
import { errorHandler, sendError } from './errors';
import { KeyUsageRecorder } from './key-usage';
import { API_ROUTES, PUBLIC_ROUTES } from './modules';
import { openApiDocument } from './openapi';
import { probeRouter } from './probes';
import { AuthFailureLimiter, KeyRateLimiter } from './rate-limit';
import { RouteRegistrar, methodsAt } from './route';

/** How many Authorization headers came (rawHeaders is name, value, ...; no per-header arrays built). */
function authorizationHeaders(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') n++;
  return n;
}

/**
 * Whether the request reached us over HTTPS. Behind a trusted proxy that is the proxy's word, and the
 * word is the LAST X-Forwarded-Proto value: a proxy that appends rather than replaces the header puts
 * its own after whatever the client sent, so the first value (what Express's req.secure reads) let a
 * plain-HTTP client claim `https` with its key in clear. Schemes are compared in any case (RFC 3986).
 */
function servedOverHttps(req: Request): boolean {
  const tls = (req.socket as { encrypted?: boolean }).encrypted === true;
  const trusted = req.app.get('trust proxy fn') as (addr: string | undefined, i: number) => boolean;
  const header = req.headers['x-forwarded-proto'];
  if (typeof header !== 'string' || !trusted(req.socket.remoteAddress, 0)) return tls;
  const proto = header.slice(header.lastIndexOf(',') + 1).trim().toLowerCase();
  return proto === '' ? tls : proto === 'https'; // an empty header says nothing: the connection's own word
}

function requestId(req: Request, res: Response, next: NextFunction) {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && /^[\w-]{1,64}$/.test(incoming) ? incoming : randomUUID();
  res.set('X-Request-Id', id);
  res.locals.log = logger.child({ reqId: id });
  const start = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    // originalUrl: req.path is relative to the router that answered (/sites rather than /api/v1/sites).
    const path = req.originalUrl.split('?')[0];
    (res.locals.log as typeof logger).info({ method: req.method, path, status: res.statusCode, ms }, 'request');
  });
  next();
}

export function createApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', ctx.config.trustProxy.length ? ctx.config.trustProxy : false);
  app.set('query parser', 'simple');
  // Paths are matched as written, as /api/event's raw handler does: `/API/V1/SITES` is not the API.
  app.set('case sensitive routing', true);
  app.use(requestId);

  app.use(probeRouter(ctx));

  const keyUsage = new KeyUsageRecorder(ctx.store);
  ctx.onShutdown.push(() => keyUsage.close());
  const limiter = new KeyRateLimiter(ctx.redis, ctx.config.rateLimitPerMinute);
  const authFailures = new AuthFailureLimiter(ctx.redis, ctx.config.authFailuresPerMinute);

  const api = express.Router({ caseSensitive: true });
  // Answers name an organisation's data (and errors its key's standing): no cache may keep them.
  api.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  // Plain HTTP is refused, never redirected: a redirect would already have leaked the key.
  api.use((req, _res, next) => next(servedOverHttps(req) ? undefined : new AppError(403, 'https_required', 'The API is served over HTTPS only.')));
  api.get('/openapi.json', (_req, res) => void res.json(openApiDocument()));
  api.all('/openapi.json', (req, _res, next) => next(methodNotAllowed(req.method, ['GET'])));
  api.use(async (req, res, next) => {
    try {
      // Node keeps the first of several Authorization headers; a proxy may read the last. Which key
      // is meant is ambiguous, so none is: the same 401 as any unusable credential.
      const header = authorizationHeaders(req.rawHeaders) > 1 ? undefined : req.headers.authorization;
      // A refused address gets no lookups; a key this process resolved lately still works from it.
      const refused = authFailures.refusal(req.ip);
      const principal = refused
        ? await authenticateKnown(header, ctx.repos.authCache).then((p) => p ?? Promise.reject(refused))
        : await authenticate(ctx.store, header, ctx.repos.authCache, async () => {
          // Refused on another process (server mode): no lookup here either.
          const elsewhere = await authFailures.refusedElsewhere(req.ip);
          if (elsewhere) throw elsewhere;
        }).catch(async (err: unknown) => {
          // The failure that spends the address's budget is answered 429 instead of 401.
          const refusal = err instanceof AppError && err.status === 401 ? await authFailures.failed(req.ip) : undefined;
          throw refusal ?? err;
        });
      // A successful authentication counts as a use even when the rate limit then refuses it.
      keyUsage.touch(principal.keyId);
      res.set(await limiter.consume(principal.keyId));
      res.locals.principal = principal;
      next();
    } catch (err) {
      next(err);
    }
  });
  // Bodies are read by each route after its scope and reach checks (api/route.ts readBody).
  const registrar = new RouteRegistrar(api, ctx);
  for (const mod of API_ROUTES) mod(registrar);
  // A path that exists under another method is 405 with Allow (RFC 9110), not a misleading 404.
  api.use((req, res, next) => {
    const allowed = methodsAt(req.path);
    if (!allowed.length) return next(notFound('endpoint'));
    next(methodNotAllowed(req.method, allowed));
  });
  app.use('/api/v1', api);

  const pub = express.Router({ caseSensitive: true });
  for (const mod of PUBLIC_ROUTES) mod(pub, ctx);
  app.use(pub);
  app.use((_req, res) => sendError(res, notFound('page')));
  app.use(errorHandler);
  return app;
}
