/**
 * Typed application errors. Every refusal the API makes is one of these; the error middleware turns
 * them into `{error: {code, message, details?}}` with the status they carry. Anything else is a bug
 * and answers 500 `internal` without a stack trace.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unknown_dimension'
  | 'invalid_credential'
  | 'forbidden'
  | 'https_required'
  | 'not_found'
  | 'method_not_allowed'
  | 'no_events'
  | 'last_owner'
  | 'conflict'
  | 'invalid_signature'
  | 'provider_unavailable'
  | 'credentials_refused'
  | 'payload_too_large'
  | 'headers_too_large'
  | 'request_timeout'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'queue_unavailable'
  | 'overloaded'
  | 'storage_unavailable'
  | 'shutting_down'
  | 'internal';

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  /**
   * The body every sender answers (API, public feeds, collection endpoint, admin CLI). docs/foundation.md:
   * a 400 lists what was wrong in `details.issues`. Schema refusals list every issue; a rule checked by
   * hand ("allowed_hostnames: at most 25 ...") is one issue, read from its message, beside any details it
   * carries. (Only the API's sender added the list: a feed's hand-checked 400 had none, its zod 400s did.)
   */
  toBody(): { error: { code: ErrorCode; message: string; details?: Record<string, unknown> } } {
    const named = this.code === 'invalid_request' && !this.details?.issues ? /^([A-Za-z_][\w.]*): (.+)$/s.exec(this.message) : null;
    const details = named ? { ...this.details, issues: [{ path: named[1], message: named[2] }] } : this.details;
    return { error: { code: this.code, message: this.message, ...(details ? { details } : {}) } };
  }
}

export const invalidRequest = (message: string, details?: Record<string, unknown>) =>
  new AppError(400, 'invalid_request', message, details);

// RFC 6750 §3: a 401 names the scheme it wants. No `error=` attribute: a missing token and a revoked
// one must look the same (spec, Authentication 11).
export const invalidCredential = () =>
  new AppError(401, 'invalid_credential', 'The bearer token is missing, malformed, revoked or expired.', undefined, {
    'WWW-Authenticate': 'Bearer realm="tally"',
  });

/** One body for every 403 so a caller cannot tell a missing scope from a foreign or absent site. */
export const forbidden = () => new AppError(403, 'forbidden', 'This key may not access this resource.');

export const notFound = (what = 'resource') => new AppError(404, 'not_found', `The ${what} was not found.`);

export const conflict = (code: ErrorCode, message: string) => new AppError(409, code, message);

/**
 * A path that exists under other methods (RFC 9110): one wording for the API, the probes and the
 * collection endpoint. HEAD is listed wherever GET is, as every GET answers it (RFC 9110 9.3.2).
 */
export const methodNotAllowed = (method: string | undefined, allowed: readonly string[]) => {
  const all = allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
  return new AppError(405, 'method_not_allowed', `${method} is not a method of this endpoint; it allows ${all.join(', ')}.`, undefined, { Allow: all.join(', ') });
};

/** A long admin command (import, seed) stopped by a shutdown; `message` says what it stored. */
export const shuttingDown = (message: string) => new AppError(503, 'shutting_down', `the server is shutting down: ${message}`);

/** Reports cannot be answered from storage right now (unreachable, or its rollups not current); `message` says why. */
export const storageUnavailable = (message: string, retryAfterS: number) =>
  new AppError(503, 'storage_unavailable', message, undefined, { 'Retry-After': String(retryAfterS) });

/** Redis is down: a job cannot be queued, or (`message`) a Redis lease cannot be taken. */
export const queueUnavailable = (message = 'The job queue (Redis) is unavailable; try again later.') =>
  new AppError(503, 'queue_unavailable', message, undefined, { 'Retry-After': '5' });
