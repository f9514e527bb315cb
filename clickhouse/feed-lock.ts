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
  /** Runs `fn` holding the lease, or returns false without running it when another process holds it. */
  withLease(fn: () => Promise<void>): Promise<boolean>;
}

const LEASE_MS = 30_000;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export function redisFeedLock(redis: RedisHandle, name: string): FeedLock {
  const key = `${redis.prefix}:rollup-feed:${name}`;
  return {
    async withLease(fn) {
      if (!redis.isUp()) return false;
      const holder = randomUUID();
      const got = await redis.client.set(key, holder, 'PX', LEASE_MS, 'NX').catch(() => null);
      if (got !== 'OK') return false;
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
