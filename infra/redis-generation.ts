import { logger } from '../core/logger';
import type { GenerationSource } from '../model/auth-cache';
import type { RedisHandle } from './redis';

/**
 * The auth cache's shared generation for server mode (several processes over one ClickHouse): a Redis
 * counter bumped after every auth-relevant metadata write and read before every cached lookup. One
 * GET costs far less than the two FINAL queries it saves. Lookups do not share a GET: one issued
 * before a writer's INCR could hand the old generation to a request that started after it.
 * While Redis is down `current()` answers null and the caches are bypassed.
 */
export class RedisGeneration implements GenerationSource {
  private readonly key: string;

  constructor(private readonly redis: RedisHandle) {
    this.key = `${redis.prefix}:meta-generation`;
  }

  current(): Promise<string | null> {
    if (!this.redis.isUp()) return Promise.resolve(null);
    return this.redis.client.get(this.key).then((v) => v ?? '0', () => null);
  }

  async bump(): Promise<void> {
    try {
      await this.redis.client.incr(this.key);
    } catch (err) {
      // Other processes keep their entries until the TTL runs out; say so loudly.
      logger.warn({ err: (err as Error).message }, 'could not announce a metadata change to other processes');
    }
  }
}
