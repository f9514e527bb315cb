import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../core/errors';
import type { RedisHandle } from '../infra/redis';

/**
 * A budget per minute counted in Redis (shared by every API process); while Redis is down the
 * in-memory insurance limiter takes over (per process), so a Redis outage never lifts limits.
 */
export function perMinuteLimiter(redis: RedisHandle, name: string, perMinute: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis.client,
    keyPrefix: `${redis.prefix}:${name}`,
    points: perMinute,
    duration: 60,
    insuranceLimiter: new RateLimiterMemory({ points: perMinute, duration: 60 }),
  });
}

/** The 429 of a spent budget: `Retry-After` in whole seconds, the message worded by `say`. */
function rateLimited(msLeft: number, say: (retrySeconds: number) => string, headers: Record<string, string> = {}): AppError {
  const retry = Math.max(1, Math.ceil(msLeft / 1000));
  return new AppError(429, 'rate_limited', say(retry), undefined, { 'Retry-After': String(retry), ...headers });
}

/**
 * Spends one point of `key`'s budget; past it, throws the 429 (rateLimited). A storage failure with
 * no insurance result lets the request through (undefined).
 */
export async function spendOrRefuse(
  limiter: RateLimiterRedis, key: string, say: (retrySeconds: number) => string, headers?: Record<string, string>,
): Promise<RateLimiterRes | undefined> {
  try {
    return await limiter.consume(key);
  } catch (rej) {
    if (rej instanceof Error) return undefined;
    throw rateLimited((rej as RateLimiterRes).msBeforeNext, say, headers);
  }
}

/** Per-key request budget (perMinuteLimiter). */
export class KeyRateLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: RedisHandle, perMinute: number) {
    this.limiter = perMinuteLimiter(redis, 'rl', perMinute);
  }

  async consume(keyId: string): Promise<Record<string, string>> {
    const r = await spendOrRefuse(this.limiter, keyId, (s) => `Rate limit exceeded; retry in ${s} s.`, { 'X-RateLimit-Remaining': '0' });
    return r ? { 'X-RateLimit-Remaining': String(r.remainingPoints) } : {};
  }
}

/** Blocked addresses kept in memory beyond this are swept of expired entries (bounds the map). */
const MAX_BLOCKED = 100_000;

/**
 * Failed authentications per client address. Every unknown token costs a ClickHouse lookup and
 * pushes a real key out of the principal cache, so a flood of made-up tokens is a denial of service
 * even though guessing one is hopeless. Once an address has spent its budget it is refused 429
 * before any lookup until the window ends, except for a key this process resolved lately (served
 * from the principal cache with no lookup: one tenant's bad tokens behind a shared NAT do not lock
 * the others out; api/app.ts). IPv6 clients are counted per /64: one
 * host usually holds the whole prefix. The counts live in Redis (shared by API processes); each
 * process remembers which addresses it has refused, so a blocked address costs no round trip.
 */
export class AuthFailureLimiter {
  private readonly limiter: RateLimiterRedis;
  private readonly blocked = new Map<string, number>();
  /** When the last refusal ends: from then on nothing is blocked and the map is emptied at once. */
  private lastUntil = 0;

  constructor(redis: RedisHandle, perMinute: number) {
    this.limiter = perMinuteLimiter(redis, 'authfail', perMinute);
  }

  /** The 429 to answer when the address is refused lookups for now, else undefined. */
  refusal(ip: string | undefined): AppError | undefined {
    if (this.blocked.size === 0) return undefined; // the usual case: no address parsed per request
    if (Date.now() >= this.lastUntil) {
      // Every refusal has ended: back to the usual case (an ended entry used to stay until its address came back).
      this.blocked.clear();
      return undefined;
    }
    const client = clientKey(ip);
    const until = this.blocked.get(client);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left > 0) return tooManyFailures(left);
    this.blocked.delete(client);
    return undefined;
  }

  /** Addresses remembered as refused (for tests: the usual request must find none). */
  get remembered(): number {
    return this.blocked.size;
  }

  /**
   * Before a lookup (a key not in this process's principal cache): the 429 when the address spent its
   * budget on another process (the counts are shared, the memory of refusals is not), else undefined.
   * Without it a key nobody here resolved lately went on working from a refused address, and made-up
   * tokens cost each process a lookup, where docs/AUTH.md promises neither. One Redis read per cache
   * miss, which costs a ClickHouse query anyway; nothing is spent.
   */
  async refusedElsewhere(ip: string | undefined): Promise<AppError | undefined> {
    const client = clientKey(ip);
    let res: RateLimiterRes | null;
    try {
      res = await this.limiter.get(client);
    } catch {
      return undefined; // storage failure: the count is not known, so it is not held against the address
    }
    if (!res || res.consumedPoints <= this.limiter.points) return undefined;
    return this.remember(client, res.msBeforeNext);
  }

  /** Counts one failure; answers the 429 to send instead of 401 once the budget is spent. */
  async failed(ip: string | undefined): Promise<AppError | undefined> {
    const client = clientKey(ip);
    try {
      await this.limiter.consume(client);
      return undefined;
    } catch (rej) {
      if (rej instanceof Error) return undefined; // storage failure with no insurance result
      return this.remember(client, (rej as RateLimiterRes).msBeforeNext);
    }
  }

  /** Refuses `client` lookups for `left` ms from now; the 429 that says so. */
  private remember(client: string, left: number): AppError {
    if (this.blocked.size >= MAX_BLOCKED) this.sweep();
    const until = Date.now() + left;
    this.blocked.set(client, until);
    this.lastUntil = Math.max(this.lastUntil, until);
    return tooManyFailures(left);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [client, until] of this.blocked) if (until <= now) this.blocked.delete(client);
  }
}

const tooManyFailures = (msLeft: number) => rateLimited(msLeft, (s) => `Too many failed authentications from this address; retry in ${s} s.`);

/** The address a budget belongs to: IPv4 (also IPv4-mapped IPv6) as is, IPv6 by its /64. */
export function clientKey(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? 'unknown';
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
