/**
 * What a failed Google call means for Tally, read from the error the auth library or the API client
 * threw (gaxios: `status`, `response.data`), without depending on their classes:
 * - `credentials`: the token endpoint refused the key (`invalid_grant`, `invalid_client`,
 *   `unauthorized_client`), or the API refused the token (401);
 * - `access`: the account may not read the property (403 other than a quota, 404);
 * - `unavailable`: anything else (network, 5xx, 429 and quota 403s): worth retrying.
 */
export type GoogleFailure = 'credentials' | 'access' | 'unavailable';

const REFUSED_GRANTS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);
const QUOTA_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded']);

interface GoogleErrorShape {
  status?: number;
  response?: { status?: number; data?: unknown };
}

interface ApiErrorBody {
  error?: string | { status?: string; errors?: { reason?: string }[] };
}

export function googleFailure(err: unknown): GoogleFailure {
  const e = (err ?? {}) as GoogleErrorShape;
  const status = e.response?.status ?? e.status;
  const body = (e.response?.data ?? {}) as ApiErrorBody;
  if (status === 400 && typeof body.error === 'string' && REFUSED_GRANTS.has(body.error)) return 'credentials';
  if (status === 401) return 'credentials';
  if (status === 404) return 'access';
  if (status === 403) {
    const detail = typeof body.error === 'object' ? body.error : undefined;
    const quota = detail?.status === 'RESOURCE_EXHAUSTED' || (detail?.errors ?? []).some((x) => QUOTA_REASONS.has(x.reason ?? ''));
    return quota ? 'unavailable' : 'access';
  }
  return 'unavailable';
}
