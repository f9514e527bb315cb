import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';

/**
 * A local stand-in for Google's OAuth token endpoint and the Search Console API, speaking their wire
 * formats for what Tally calls:
 * - `POST /token`: the service-account JWT bearer grant. The assertion's RS256 signature is checked
 *   against the account's public key, and its issuer, audience, scope and expiry as Google checks
 *   them; refusals answer 400 `invalid_grant` / `invalid_scope` as Google does.
 * - `GET /webmasters/v3/sites/{siteUrl}`: the account's permission on a property (403 without one).
 * - `POST /webmasters/v3/sites/{siteUrl}/searchAnalytics/query`: rows grouped by the requested
 *   dimensions (date, query, page), most clicked first, `rowLimit`/`startRow` paging, `dataState`
 *   (`final` leaves out days from `firstIncompleteDate` on; `all` reports that date in `metadata`
 *   when grouped by date and the range reaches it). An anonymised query (`query: null`) counts in
 *   groupings without `query` and is left out of groupings by query, as Google does.
 * Tally's client is pointed at it with TALLY_GOOGLE_API_URL. Tests add accounts and rows, grant and
 * revoke access, and inject failures.
 */
export interface ConsoleRow {
  /** null: an anonymised query (rare queries Google never reports by name). */
  date: string; query: string | null; page: string; clicks: number; impressions: number; position: number;
}

export interface ServiceAccountKey {
  type: 'service_account'; project_id: string; private_key_id: string; private_key: string; client_email: string;
  client_id: string; token_uri: string;
}

export interface GoogleDouble {
  url: string;
  /** A new service account Google knows, with its JSON key file. */
  serviceAccount(name: string): ServiceAccountKey;
  /** Forget an account's key (a deleted key): its assertions are refused from now on. */
  deleteKey(email: string): void;
  grant(email: string, property: string, level?: string): void;
  revoke(email: string, property: string): void;
  /** The property's rows, which tests edit freely. */
  rows(property: string): ConsoleRow[];
  /** Days from this one on are still being collected (unset: every day is final). */
  firstIncompleteDate: string | undefined;
  /**
   * The next n requests (to paths containing `path`, when given) answer `status` (500 unless told),
   * once `after` such requests have been answered normally.
   */
  failNext(n: number, opts?: { path?: string; status?: number; after?: number }): void;
  /** The next request to a path containing `path` is answered only once the returned function is called. */
  holdNext(path: string): () => void;
  requests: { method: string; path: string; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

const TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/webmasters.readonly';

const b64url = (s: string) => Buffer.from(s, 'base64url');

function send(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}

const apiError = (res: http.ServerResponse, code: number, status: string, message: string, reason: string) =>
  send(res, code, { error: { code, message, errors: [{ message, domain: 'global', reason }], status } });

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

interface Grouped { keys: string[]; clicks: number; impressions: number; positionSum: number }

/** Google's aggregation: sums per key, position weighted by impressions, most clicked first. */
function query(all: ConsoleRow[], q: Record<string, any>, incomplete: string | undefined) {
  const dims: string[] = q.dimensions ?? [];
  const final = (q.dataState ?? 'final') !== 'all';
  const inRange = all.filter((r) => r.date >= q.startDate && r.date <= q.endDate && !(final && incomplete && r.date >= incomplete)
    && !(r.query === null && dims.includes('query')));
  const groups = new Map<string, Grouped>();
  for (const r of inRange) {
    const keys = dims.map((d) => String(r[d as keyof ConsoleRow]));
    const k = JSON.stringify(keys);
    const g = groups.get(k) ?? { keys, clicks: 0, impressions: 0, positionSum: 0 };
    g.clicks += r.clicks;
    g.impressions += r.impressions;
    g.positionSum += r.position * r.impressions;
    groups.set(k, g);
  }
  const sorted = [...groups.values()].sort((a, b) => b.clicks - a.clicks || b.impressions - a.impressions);
  const start = Number(q.startRow ?? 0);
  const page = sorted.slice(start, start + Math.min(Number(q.rowLimit ?? 1000), 25_000));
  const out: Record<string, unknown> = { responseAggregationType: dims.includes('page') ? 'byPage' : 'byProperty' };
  if (page.length) {
    out.rows = page.map((g) => ({
      keys: g.keys, clicks: g.clicks, impressions: g.impressions,
      ctr: g.impressions ? g.clicks / g.impressions : 0, position: g.impressions ? g.positionSum / g.impressions : 0,
    }));
  }
  if (!final && dims.includes('date') && incomplete && incomplete <= q.endDate) out.metadata = { firstIncompleteDate: incomplete };
  return out;
}

export async function startGoogleDouble(): Promise<GoogleDouble> {
  const publicKeys = new Map<string, KeyObject>();
  const grants = new Map<string, string>();
  const tokens = new Map<string, { email: string; expires: number }>();
  const data = new Map<string, ConsoleRow[]>();
  const failures: { path?: string; status: number; after: number }[] = [];
  const holds: { path: string; released: Promise<void> }[] = [];

  function token(res: http.ServerResponse, form: URLSearchParams) {
    const refuse = (error: string, description: string) => send(res, 400, { error, error_description: description });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse('unsupported_grant_type', 'Invalid grant_type');
    const [h, p, s] = (form.get('assertion') ?? '').split('.');
    let claims: Record<string, any>;
    try {
      if (JSON.parse(b64url(h).toString()).alg !== 'RS256') return refuse('invalid_grant', 'Invalid JWT: alg');
      claims = JSON.parse(b64url(p).toString());
    } catch {
      return refuse('invalid_grant', 'Invalid JWT: malformed');
    }
    const key = publicKeys.get(claims.iss);
    if (!key) return refuse('invalid_grant', 'Invalid grant: account not found');
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, b64url(s ?? ''))) return refuse('invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== TOKEN_AUDIENCE) return refuse('invalid_grant', 'Invalid JWT: audience');
    if (!(claims.exp > Date.now() / 1000)) return refuse('invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.');
    if (!String(claims.scope ?? '').split(' ').includes(SCOPE)) return refuse('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const access = `ya29.${randomBytes(24).toString('hex')}`;
    tokens.set(access, { email: claims.iss, expires: Date.now() + 3_600_000 });
    return send(res, 200, { access_token: access, expires_in: 3599, token_type: 'Bearer' });
  }

  function api(req: http.IncomingMessage, res: http.ServerResponse, path: string, body: Record<string, unknown>) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const who = bearer ? tokens.get(bearer) : undefined;
    if (!who || who.expires < Date.now()) return apiError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', 'authError');
    const m = /^\/webmasters\/v3\/sites\/([^/]+)(\/searchAnalytics\/query)?$/.exec(path);
    if (!m) return apiError(res, 404, 'NOT_FOUND', 'Not found', 'notFound');
    const property = decodeURIComponent(m[1]);
    const level = grants.get(`${who.email} ${property}`);
    if (!level) {
      return apiError(res, 403, 'PERMISSION_DENIED', `User does not have sufficient permission for site '${property}'. See also: https://support.google.com/webmasters/answer/2451999.`, 'forbidden');
    }
    if (!m[2] && req.method === 'GET') return send(res, 200, { siteUrl: property, permissionLevel: level });
    if (m[2] && req.method === 'POST') return send(res, 200, query(data.get(property) ?? [], body, double.firstIncompleteDate));
    return apiError(res, 405, 'INVALID_ARGUMENT', 'Method not allowed', 'badRequest');
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    const raw = await readBody(req);
    const json = (req.headers['content-type'] ?? '').includes('json') && raw ? JSON.parse(raw) : {};
    double.requests.push({ method: req.method ?? '', path: decodeURIComponent(url.pathname), body: json });
    const failing = failures.findIndex((f) => !f.path || decodeURIComponent(url.pathname).includes(f.path));
    if (failing >= 0 && failures[failing].after > 0) failures[failing].after--;
    else if (failing >= 0) {
      const { status } = failures.splice(failing, 1)[0];
      return status === 429
        ? apiError(res, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', 'rateLimitExceeded')
        : apiError(res, status, 'INTERNAL', 'Internal error encountered.', 'backendError');
    }
    const held = holds.findIndex((h) => decodeURIComponent(url.pathname).includes(h.path));
    if (held >= 0) await holds.splice(held, 1)[0].released;
    if (url.pathname === '/token' && req.method === 'POST') return token(res, new URLSearchParams(raw));
    return api(req, res, url.pathname, json);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const double: GoogleDouble = {
    url: `http://127.0.0.1:${port}/`,
    serviceAccount(name) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const email = `${name}@tally-test.iam.gserviceaccount.com`;
      publicKeys.set(email, publicKey);
      return {
        type: 'service_account', project_id: 'tally-test', private_key_id: randomBytes(20).toString('hex'),
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), client_email: email,
        client_id: String(100_000_000_000 + publicKeys.size), token_uri: TOKEN_AUDIENCE,
      };
    },
    deleteKey(email) {
      publicKeys.delete(email);
      for (const [access, t] of tokens) if (t.email === email) tokens.delete(access);
    },
    grant: (email, property, level = 'siteFullUser') => void grants.set(`${email} ${property}`, level),
    revoke: (email, property) => void grants.delete(`${email} ${property}`),
    rows(property) {
      if (!data.has(property)) data.set(property, []);
      return data.get(property)!;
    },
    firstIncompleteDate: undefined,
    failNext: (n, opts = {}) => failures.push(...Array.from({ length: n }, (_, i) => ({ path: opts.path, status: opts.status ?? 500, after: i === 0 ? opts.after ?? 0 : 0 }))),
    holdNext(path) {
      let release!: () => void;
      holds.push({ path, released: new Promise<void>((resolve) => (release = resolve)) });
      return () => release();
    },
    requests: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return double;
}
