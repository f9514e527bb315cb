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

/** Per-key request budget (perMinuteLimiter). */
export class KeyRateLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: RedisHandle, perMinute: number) {
    this.limiter = perMinuteLimiter(redis, 'rl', perMinute);
  }

  async consume(keyId: string): Promise<Record<string, string>> {
    try {
      const r = await this.limiter.consume(keyId);
      return { 'X-RateLimit-Remaining': String(r.remainingPoints) };
    } catch (rej) {
      if (rej instanceof Error) return {}; // storage failure with no insurance result: let the request through
      const retry = Math.max(1, Math.ceil((rej as RateLimiterRes).msBeforeNext / 1000));
      throw new AppError(429, 'rate_limited', `Rate limit exceeded; retry in ${retry} s.`, undefined, {
        'Retry-After': String(retry),
        'X-RateLimit-Remaining': '0',
      });
    }
  }
}

/** Blocked addresses kept in memory beyond this are swept of expired entries (bounds the map). */
const MAX_BLOCKED = 100_000;

/**
 * Failed authentications per client address. Every unknown token costs a ClickHouse lookup and
 * pushes a real key out of the principal cache, so a flood of made-up tokens is a denial of service
 * even though guessing one is hopeless. Once an address has spent its budget it is refused 429
 * before any lookup until the window ends, whatever it sends. IPv6 clients are counted per /64: one
 * host usually holds the whole prefix. The counts live in Redis (shared by API processes); each
 * process remembers which addresses it has refused, so a blocked address costs no round trip.
 */
export class AuthFailureLimiter {
  private readonly limiter: RateLimiterRedis;
  private readonly blocked = new Map<string, number>();

  constructor(redis: RedisHandle, perMinute: number) {
    this.limiter = perMinuteLimiter(redis, 'authfail', perMinute);
  }

  /** Throws 429 when the address is refused for now. */
  check(ip: string | undefined): void {
    if (this.blocked.size === 0) return; // the usual case: no address parsed per request
    const client = clientKey(ip);
    const until = this.blocked.get(client);
    if (until === undefined) return;
    const left = until - Date.now();
    if (left > 0) throw tooManyFailures(left);
    this.blocked.delete(client);
  }

  /** Counts one failure; answers the 429 to send instead of 401 once the budget is spent. */
  async failed(ip: string | undefined): Promise<AppError | undefined> {
    const client = clientKey(ip);
    try {
      await this.limiter.consume(client);
      return undefined;
    } catch (rej) {
      if (rej instanceof Error) return undefined; // storage failure with no insurance result
      const left = (rej as RateLimiterRes).msBeforeNext;
      if (this.blocked.size >= MAX_BLOCKED) this.sweep();
      this.blocked.set(client, Date.now() + left);
      return tooManyFailures(left);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [client, until] of this.blocked) if (until <= now) this.blocked.delete(client);
  }
}

function tooManyFailures(msLeft: number): AppError {
  const retry = Math.max(1, Math.ceil(msLeft / 1000));
  return new AppError(429, 'rate_limited', `Too many failed authentications from this address; retry in ${retry} s.`, undefined, {
    'Retry-After': String(retry),
  });
}

/** The address a budget belongs to: IPv4 (also IPv4-mapped IPv6) as is, IPv6 by its /64. */
export function clientKey(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? 'unknown';
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
