import type { ErrorRequestHandler, Response } from 'express';
import { AppError } from '../core/errors';
import { logger } from '../core/logger';

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
