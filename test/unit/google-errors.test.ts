import { googleFailure } from '../../integrations/google-errors';

/** The shapes gaxios gives Google's refusals, as the token endpoint and the Search Console API send them. */
const answered = (status: number, data: unknown) => ({ status, response: { status, data } });
const apiError = (status: number, state: string, reason: string) =>
  answered(status, { error: { code: status, message: 'x', status: state, errors: [{ reason }] } });

describe('googleFailure', () => {
  test.each([
    ['a deleted or unknown key at the token endpoint', answered(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }), 'credentials'],
    ['a disabled client', answered(400, { error: 'invalid_client' }), 'credentials'],
    ['a token the API no longer accepts', apiError(401, 'UNAUTHENTICATED', 'authError'), 'credentials'],
    ['no permission on the property', apiError(403, 'PERMISSION_DENIED', 'forbidden'), 'access'],
    ['a property that does not exist', apiError(404, 'NOT_FOUND', 'notFound'), 'access'],
    ['a quota 403 (older API form)', apiError(403, 'PERMISSION_DENIED', 'quotaExceeded'), 'unavailable'],
    ['a quota 403 (RESOURCE_EXHAUSTED)', apiError(403, 'RESOURCE_EXHAUSTED', 'x'), 'unavailable'],
    ['rate limited', apiError(429, 'RESOURCE_EXHAUSTED', 'rateLimitExceeded'), 'unavailable'],
    ['a server error', apiError(503, 'UNAVAILABLE', 'backendError'), 'unavailable'],
    ['a 400 that is not a refused grant', answered(400, { error: { code: 400, status: 'INVALID_ARGUMENT' } }), 'unavailable'],
    ['no answer at all (network)', Object.assign(new Error('fetch failed'), { code: 'ECONNREFUSED' }), 'unavailable'],
    ['not an error object', undefined, 'unavailable'],
  ])('%s is %s', (_what, err, failure) => {
    expect(googleFailure(err)).toBe(failure);
  });
});
