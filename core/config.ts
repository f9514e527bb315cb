import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { isHostname } from './hostname';

/**
 * Every environment variable Tally reads, parsed once. The README's table lists the same names;
 * keep them in step.
 */
export type Role = 'api' | 'worker' | 'all';

export interface Config {
  dataDir: string;
  host: string;
  httpsPort: number;
  httpPort: number;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy: string[];
  adminSocket: string;
  clickhouse: {
    url?: string;
    user?: string;
    password?: string;
    database: string;
  };
  redisUrl: string;
  /** Key prefix for everything Tally keeps in Redis, so deployments can share one Redis. */
  redisPrefix: string;
  role: Role;
  rateLimitPerMinute: number;
  /** Failed authentications per client address per minute before it is refused 429 (api/rate-limit.ts). */
  authFailuresPerMinute: number;
  /** New computations of public feeds (share boards, widget cards) per client address per minute (public/gate.ts). */
  publicFeedsPerMinute: number;
  /** Live events waiting for their insert beyond which POST /api/event answers 503 (bounds memory). */
  ingestMaxPending: number;
  geoipDb?: string;
  logLevel: string;
  /** 64 hex digits: the key integration credentials are sealed with (infra/secrets.ts). */
  secretKey?: string;
  /** Where the Stripe client sends its requests (a Stripe-compatible test server); Stripe's own API when unset. */
  stripeApiUrl?: URL;
  /** Where the Search Console client and its OAuth token exchange go (a Google-compatible test server); Google when unset. */
  googleApiUrl?: URL;
  /** Where alert firings are mailed (workers/jobs/alert-delivery.ts); unset: firings are recorded and logged, not sent. */
  smtp?: SmtpConfig;
  /** The From of alert mail. */
  mailFrom: string;
}

/** TALLY_SMTP_URL taken apart: `secure` is implicit TLS (smtps://); smtp:// upgrades with STARTTLS when offered. */
export interface SmtpConfig {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  pass?: string;
}

function int(name: string, value: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Addresses, CIDR ranges or the names `loopback`, `linklocal`, `uniquelocal` (as Express reads them). */
function trustProxy(value: string | undefined): string[] {
  const entries = list(value);
  const named = new Set(['loopback', 'linklocal', 'uniquelocal']);
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const ipOk = named.has(e) || isIP(addr) !== 0;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (isIP(addr) === 6 ? 128 : 32));
    if (!ipOk || !bitsOk) throw new Error(`TALLY_TRUST_PROXY: "${e}" is not an address, a CIDR range or loopback|linklocal|uniquelocal`);
  }
  return entries;
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function redisPrefix(value: string | undefined): string {
  const prefix = value || 'tally';
  if (!/^[\w.-]{1,64}$/.test(prefix)) throw new Error(`TALLY_REDIS_PREFIX must be 1-64 letters, digits, _ . or -, got "${prefix}"`);
  return prefix;
}

function logLevel(value: string | undefined): string {
  const level = value || 'info';
  if (!LOG_LEVELS.includes(level)) throw new Error(`TALLY_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  return level;
}

function secretKey(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new Error('TALLY_SECRET_KEY must be 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`');
  return value.toLowerCase();
}

function httpUrl(name: string, value: string | undefined): URL | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${name} must be an http(s) URL, got "${value}"`);
  return url;
}

/** A URL with its password (if any) replaced: what may be logged or shown of a connection string. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(not a URL)';
  }
}

/** REDIS_URL must be a redis:// or rediss:// URL: a typo otherwise reads as "Redis is down" for ever. */
function redisUrl(value: string | undefined): string {
  if (!value) return 'redis://127.0.0.1:6379';
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    throw new Error(`REDIS_URL must be a redis:// or rediss:// URL with a host, got "${redactUrl(value)}"`);
  }
  return value;
}

/**
 * TALLY_SMTP_URL: `smtp://[user[:pass]@]host[:port]` (port 587) or `smtps://...` (port 465). Checked
 * at start, so a typo is named there instead of failing every alert mail; a refusal never shows the
 * password. User and password are percent-decoded (a password with `@` or `/` is written `%40`, `%2F`).
 */
function smtpUrl(value: string | undefined): SmtpConfig | undefined {
  if (!value) return undefined;
  const display = redactUrl(value);
  const refuse = (why: string) => new Error(`TALLY_SMTP_URL must be smtp://[user[:password]@]host[:port] or smtps://..., ${why}, got "${display}"`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The usual cause: a password with `#`, `?` or `/` left as is (they end the user part of a URL).
    throw refuse('it is not a URL (percent-encode special characters in the user and password: # is %23, ? is %3F, / is %2F, @ is %40)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw refuse('the scheme is neither smtp nor smtps');
  if (!url.hostname) throw refuse('the host is missing');
  // Anything else would be silently ignored: options belong in the variables, not in the URL.
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) throw refuse('it takes no path, query or fragment');
  // URL takes port 0; the mail client would read it as "no port" and quietly use its own default.
  if (url.port === '0') throw refuse('the port must be from 1 to 65535');
  const secure = url.protocol === 'smtps:';
  let user: string | undefined;
  let pass: string | undefined;
  try {
    user = url.username ? decodeURIComponent(url.username) : undefined;
    pass = url.password ? decodeURIComponent(url.password) : undefined;
  } catch {
    throw refuse('its user or password is not valid percent-encoding');
  }
  if (pass !== undefined && user === undefined) throw refuse('a password needs a user');
  // IPv6 literals come bracketed from URL; the socket wants them bare.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: url.port ? Number(url.port) : secure ? 465 : 587, secure, user, pass };
}

/**
 * TALLY_MAIL_FROM: one address, bare or as `Name <address>`. Checked at start: a relay refusing the
 * sender would otherwise fail every delivery, attempt after attempt.
 */
function mailFrom(value: string | undefined): string {
  if (!value) return 'Tally <tally@localhost>';
  const from = value.trim();
  const m = /^(?:[^<>@\r\n]*<([^<>\s@]+@[^<>\s@]+)>|([^<>\s@]+@[^<>\s@]+))$/.exec(from);
  if (!m) throw new Error(`TALLY_MAIL_FROM must be one e-mail address, bare or as "Name <address>", got "${value}"`);
  return from;
}

/** The metadata marker every MaxMind DB file carries in its last 128 KB ("\xAB\xCD\xEFMaxMind.com"). */
const MMDB_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');

/**
 * TALLY_GEOIP_DB is checked at start: a missing or foreign file would otherwise surface at the first
 * event (every event 503, every import failing) while /readyz said ready. Only the file's tail is
 * read here, so the CLI does not load a city database to find the admin socket.
 */
function geoipDb(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let tail: Buffer;
  try {
    const fd = openSync(value, 'r');
    try {
      const size = fstatSync(fd).size;
      tail = Buffer.alloc(Math.min(size, 128 * 1024));
      readSync(fd, tail, 0, tail.length, size - tail.length);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw new Error(`TALLY_GEOIP_DB: cannot read "${value}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (tail.indexOf(MMDB_MARKER) < 0) throw new Error(`TALLY_GEOIP_DB: "${value}" is not a MaxMind DB (.mmdb) file`);
  return path.resolve(value);
}

/** An address (or a name resolving to one) to listen on; checked here so a typo is named, not a DNS error. */
function listenHost(value: string | undefined): string {
  if (value === undefined || value === '') return '0.0.0.0';
  const host = value.trim();
  if (isIP(host) || isHostname(host)) return host;
  throw new Error(`TALLY_HOST must be an IP address or a host name to listen on, got "${value}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.TALLY_DATA_DIR ?? 'data');
  const role = (env.TALLY_ROLE ?? 'all') as Role;
  if (!['api', 'worker', 'all'].includes(role)) throw new Error(`TALLY_ROLE must be api, worker or all, got "${role}"`);
  if (env.CLICKHOUSE_CLUSTER) {
    // Refused before anything is created (migrations would make ON CLUSTER tables first).
    throw new Error('CLICKHOUSE_CLUSTER: cluster mode is not supported yet (the report rollups feeder cannot follow a Distributed table; docs/OPERATIONS.md); unset it');
  }
  if (role !== 'all' && !env.CLICKHOUSE_URL) {
    // TRAP: chDB allows one process per data directory, so embedded mode cannot split roles.
    throw new Error('TALLY_ROLE=api|worker needs CLICKHOUSE_URL: embedded storage runs every role in one process');
  }
  return {
    dataDir,
    host: listenHost(env.TALLY_HOST),
    httpsPort: int('TALLY_HTTPS_PORT', env.TALLY_HTTPS_PORT, 8443, 0, 65535),
    httpPort: int('TALLY_HTTP_PORT', env.TALLY_HTTP_PORT, 8080, 0, 65535),
    tlsCert: env.TALLY_TLS_CERT || undefined,
    tlsKey: env.TALLY_TLS_KEY || undefined,
    trustProxy: trustProxy(env.TALLY_TRUST_PROXY),
    adminSocket: env.TALLY_ADMIN_SOCKET || path.join(dataDir, 'admin.sock'),
    clickhouse: {
      url: env.CLICKHOUSE_URL || undefined,
      user: env.CLICKHOUSE_USER || undefined,
      password: env.CLICKHOUSE_PASSWORD || undefined,
      database: env.CLICKHOUSE_DATABASE || 'tally',
    },
    redisUrl: redisUrl(env.REDIS_URL),
    redisPrefix: redisPrefix(env.TALLY_REDIS_PREFIX),
    role,
    rateLimitPerMinute: int('TALLY_RATE_LIMIT_PER_MINUTE', env.TALLY_RATE_LIMIT_PER_MINUTE, 600, 1),
    authFailuresPerMinute: int('TALLY_AUTH_FAILURES_PER_MINUTE', env.TALLY_AUTH_FAILURES_PER_MINUTE, 100, 1),
    publicFeedsPerMinute: int('TALLY_PUBLIC_FEEDS_PER_MINUTE', env.TALLY_PUBLIC_FEEDS_PER_MINUTE, 30, 1),
    ingestMaxPending: int('TALLY_INGEST_MAX_PENDING', env.TALLY_INGEST_MAX_PENDING, 20_000, 1, 1_000_000),
    geoipDb: geoipDb(env.TALLY_GEOIP_DB),
    logLevel: logLevel(env.TALLY_LOG_LEVEL),
    secretKey: secretKey(env.TALLY_SECRET_KEY),
    stripeApiUrl: httpUrl('TALLY_STRIPE_API_URL', env.TALLY_STRIPE_API_URL),
    googleApiUrl: httpUrl('TALLY_GOOGLE_API_URL', env.TALLY_GOOGLE_API_URL),
    smtp: smtpUrl(env.TALLY_SMTP_URL),
    mailFrom: mailFrom(env.TALLY_MAIL_FROM),
  };
}
