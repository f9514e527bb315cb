import { randomInt } from 'node:crypto';
import { settlesWithin } from '../core/deadline';
import { logger } from '../core/logger';
import type { GenerationSource } from '../model/auth-cache';
import type { RedisHandle } from './redis';

/**
 * A missing counter (first use, or Redis restarted empty) starts at a random value, never at 0: a
 * counter that restarted from 0 could climb back to a value a process saw before the loss, and that
 * process would keep serving what it cached then (a revoked key, an old reach) until the TTL.
 */
const randomStart = () => String(randomInt(2 ** 47));
/** A healthy Redis answers a GET in well under a millisecond; past this the generation counts as unknown. */
const GENERATION_WAIT_MS = 500;
const BUMP = "if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end return redis.call('INCR', KEYS[1])";

/**
 * The auth cache's shared generation for server mode (several processes over one ClickHouse): a Redis
 * counter bumped after every auth-relevant metadata write and read before every cached lookup. One
 * GET costs far less than the two FINAL queries it saves. Lookups do not share a GET: one issued
 * before a writer's INCR could hand the old generation to a request that started after it.
 * While Redis is down `current()` answers null and the caches are bypassed.
 */
export class RedisGeneration implements GenerationSource {
  private readonly key: string;
  /** A GET that outlived GENERATION_WAIT_MS and has not answered yet. */
  private unanswered: Promise<string | null> | null = null;

  constructor(private readonly redis: RedisHandle) {
    this.key = `${redis.prefix}:meta-generation`;
  }

  /**
   * Null (unknown) while Redis is down, and when it does not answer within GENERATION_WAIT_MS, so a
   * stalled Redis (paused, or a connection dead without a reset) holds no cached lookup (each event's
   * site, each request's key) longer: the client gives up on a stalled connection after REDIS_ANSWER_MS
   * (infra/redis.ts), but a missing counter takes three commands. While a GET is still unanswered no
   * other is sent (they would pile up in the client's queue); its late answer is not used either, as
   * it may predate a write the waiting caller follows.
   */
  async current(): Promise<string | null> {
    if (!this.redis.isUp() || this.unanswered) return null;
    const get = this.redis.client.get(this.key).then((v) => v ?? this.start()).catch(() => null);
    if (await settlesWithin(get, GENERATION_WAIT_MS)) return get;
    this.unanswered = get;
    void get.finally(() => {
      if (this.unanswered === get) this.unanswered = null;
    });
    return null;
  }

  async bump(): Promise<void> {
    try {
      await this.redis.client.eval(BUMP, 1, this.key, randomStart());
    } catch (err) {
      // Other processes keep their entries until the TTL runs out; say so loudly.
      logger.warn({ err: (err as Error).message }, 'could not announce a metadata change to other processes');
    }
  }

  /** The counter where there is none: set only if still missing, so racing processes agree. */
  private async start(): Promise<string | null> {
    await this.redis.client.set(this.key, randomStart(), 'NX');
    return (await this.redis.client.get(this.key)) ?? null;
  }
}
