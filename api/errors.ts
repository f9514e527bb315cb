import type { ErrorRequestHandler, Response } from 'express';
import { StorageUnavailable } from '../clickhouse/store';
import { AppError, forbidden, invalidRequest, storageUnavailable } from '../core/errors';
import { logger } from '../core/logger';

/**
 * Express decodes path parameters while matching a route and throws a URIError ("Failed to decode
 * param") on a bad escape, before any check of ours. In an API site's place it is the same 403 as
 * any site id that is not a uuid (docs/AUTH.md: nothing tells sites apart); elsewhere (another path
 * id, a board's slug) a 400 naming the segment.
 */
function undecodablePath(path: string): AppError {
  const segments = path.split('/');
  const bad = segments.findIndex((s) => {
    try {
      decodeURIComponent(s);
      return false;
    } catch {
      return true;
    }
  });
  if (/^\/api\/v1\/sites\/[^/]*(\/|$)/i.test(path) && bad === 4) return forbidden();
  return invalidRequest(`path: "${segments[bad] ?? path}" is not valid percent-encoding`);
}

/**
 * A failure that is an outage, not a bug, as the answer the service documents for it: in server mode
 * ClickHouse unreachable is 503 storage_unavailable with Retry-After, not 500 internal. The API's and
 * the admin socket's error handling both read it, so a CLI command meets the same answer.
 */
export function outageError(err: unknown): AppError | undefined {
  if (err instanceof StorageUnavailable) return storageUnavailable('Storage is unreachable; try again shortly.', 5);
  return undefined;
}

export function sendError(res: Response, err: AppError): void {
  if (err.headers) res.set(err.headers);
  res.status(err.status).json(err.toBody());
}

/**
 * The one error middleware. Typed errors become their status and code; body-parser failures become
 * 400/413/415; anything else is logged with the request id and answered 500 with no stack trace.
 */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  if (err instanceof AppError) return sendError(res, err);
  const outage = outageError(err);
  if (outage) {
    (res.locals.log ?? logger).warn({ err: (err as Error).message, path: req.path }, 'storage unreachable');
    return sendError(res, outage);
  }
  if (err instanceof URIError) return sendError(res, undecodablePath(req.originalUrl.split('?')[0]));
  // PRODUCT.md §6: bad input is 400 invalid_request with the message naming what was wrong.
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.parse.failed') {
    // Strict parsing also refuses valid JSON that is not an object or array (null, "x", 3).
    return sendError(res, new AppError(400, 'invalid_request', 'body: must be a JSON object (the request body is not valid JSON, or is not an object).'));
  }
  if (e?.type === 'entity.too.large') return sendError(res, new AppError(413, 'payload_too_large', 'The request body is too large.'));
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return sendError(res, new AppError(415, 'unsupported_media_type', 'Unsupported body encoding.'));
  }
  if (e?.status && e.status >= 400 && e.status < 500) {
    return sendError(res, new AppError(e.status, 'invalid_request', e.message ?? 'Bad request.'));
  }
  (res.locals.log ?? logger).error({ err, path: req.path }, 'unhandled error');
  sendError(res, new AppError(500, 'internal', 'Internal error. The request id is in the X-Request-Id header.'));
};
