import { redisLeases } from '../infra/lease';
import type { RedisHandle } from '../infra/redis';

/**
 * One feeder at a time across processes. With a ClickHouse server several processes (api replicas,
 * the worker) run a rollup feeder over the same tables; two feeds reading the same watermark would
 * feed a range twice. A Redis lease (infra/lease.ts) serialises them. Redis down means no lease: the
 * feed waits for the next try (rollups lag; nothing is counted twice).
 */
export interface FeedLock {
  /**
   * Runs `fn` holding the lease, or returns false without running it: Redis is down, or another
   * process held the lease for all of `waitMs` (default 0: one try).
   */
  withLease(fn: () => Promise<void>, waitMs?: number): Promise<boolean>;
}

const LEASE_MS = 30_000;

export function redisFeedLock(redis: RedisHandle, database: string): FeedLock {
  const leases = redisLeases(redis, 'rollup-feed', LEASE_MS);
  return { withLease: async (fn, waitMs = 0) => (await leases.run(database, fn, waitMs)).held };
}
