import { randomUUID } from 'node:crypto';
import type { RedisHandle } from '../infra/redis';

/**
 * One feeder at a time across processes. With a ClickHouse server several processes (api replicas,
 * the worker) run a rollup feeder over the same tables; two feeds reading the same watermark would
 * feed a range twice. A Redis lease serialises them: taken with SET NX PX, renewed while the feed
 * runs, released only by its holder. Redis down means no lease: the feed waits for the next try
 * (rollups lag; nothing is counted twice).
 */
export interface FeedLock {
  /**
   * Runs `fn` holding the lease, or returns false without running it: Redis is down, or another
   * process held the lease for all of `waitMs` (default 0: one try).
   */
  withLease(fn: () => Promise<void>, waitMs?: number): Promise<boolean>;
}

const LEASE_MS = 30_000;
/** How often a waiting feeder tries the lease again. */
const RETRY_MS = 50;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export function redisFeedLock(redis: RedisHandle, name: string): FeedLock {
  const key = `${redis.prefix}:rollup-feed:${name}`;
  return {
    async withLease(fn, waitMs = 0) {
      const holder = randomUUID();
      const deadline = Date.now() + waitMs;
      for (;;) {
        if (!redis.isUp()) return false;
        const got = await redis.client.set(key, holder, 'PX', LEASE_MS, 'NX').catch(() => null);
        if (got === 'OK') break;
        if (Date.now() >= deadline) return false;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
      const renew = setInterval(() => void redis.client.eval(RENEW, 1, key, holder, String(LEASE_MS)).catch(() => undefined), LEASE_MS / 3);
      renew.unref();
      try {
        await fn();
        return true;
      } finally {
        clearInterval(renew);
        await redis.client.eval(RELEASE, 1, key, holder).catch(() => undefined);
      }
    },
  };
}
