import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../core/errors';
import type { RedisHandle } from '../infra/redis';

/**
 * Per-key request budget. Redis holds the counters so every API process shares them; while Redis is
 * down the in-memory insurance limiter takes over (per process), so a Redis outage never lifts limits.
 */
export class KeyRateLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: RedisHandle, perMinute: number) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis.client,
      keyPrefix: `${redis.prefix}:rl`,
      points: perMinute,
      duration: 60,
      insuranceLimiter: new RateLimiterMemory({ points: perMinute, duration: 60 }),
    });
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
