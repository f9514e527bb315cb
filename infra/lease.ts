import { randomUUID } from 'node:crypto';
import type { RedisHandle } from './redis';

/**
 * Leases in Redis: one holder of a key at a time across the processes of a server-mode deployment
 * (api replicas, the worker). Taken with SET NX PX, renewed while the holder works, released only
 * by its holder (so a holder that outlived its expiry never frees another's lease). A process that
 * dies holding one blocks the key for at most `ttlMs`. A take Redis did not answer in time (a stall:
 * infra/redis.ts) is not taken, though its SET NX may still run when Redis wakes: the key is then held
 * for nobody, likewise for at most `ttlMs`. A release that got no answer leaves the key to its expiry.
 */
export type LeaseOutcome<T> = { held: true; value: T } | { held: false; why: 'redis_down' | 'busy' };

export interface Leases {
  /**
   * Runs `fn` holding the lease on `key`. Without running it: `redis_down`, or `busy` when another
   * holder kept the key for all of `waitMs` (0: one try).
   */
  run<T>(key: string, fn: () => Promise<T>, waitMs?: number): Promise<LeaseOutcome<T>>;
}

/** How often a waiting taker tries the lease again. */
const RETRY_MS = 25;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/** Leases under `<prefix>:<namespace>:`; each lasts `ttlMs` and is renewed every third of it. */
export function redisLeases(redis: RedisHandle, namespace: string, ttlMs: number): Leases {
  const take = async (key: string, holder: string, waitMs: number): Promise<'taken' | 'redis_down' | 'busy'> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (!redis.isUp()) return 'redis_down';
      const got = await redis.client.set(key, holder, 'PX', ttlMs, 'NX').catch(() => null);
      if (got === 'OK') return 'taken';
      if (Date.now() >= deadline) return redis.isUp() ? 'busy' : 'redis_down';
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  };
  return {
    async run(name, fn, waitMs = 0) {
      const key = `${redis.prefix}:${namespace}:${name}`;
      const holder = randomUUID();
      const taken = await take(key, holder, waitMs);
      if (taken !== 'taken') return { held: false, why: taken };
      const renew = setInterval(() => void redis.client.eval(RENEW, 1, key, holder, String(ttlMs)).catch(() => undefined), ttlMs / 3);
      renew.unref();
      try {
        return { held: true, value: await fn() };
      } finally {
        clearInterval(renew);
        await redis.client.eval(RELEASE, 1, key, holder).catch(() => undefined);
      }
    },
  };
}
