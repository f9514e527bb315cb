import { randomBytes } from 'node:crypto';
import { logger } from '../../core/logger';
import type { RedisHandle } from '../../infra/redis';

/**
 * Secret salts for the cookieless strategies. A salt is random, shared by every process through
 * Redis (SET NX, so the first writer wins) and deleted `keepMs` after the start of its period: the
 * salt of day D is gone at D+2 00:00 UTC (48 hours), a session-window salt one window after its own
 * ends (long enough to continue a session that crosses the boundary). While Redis is down each process keeps its own
 * salts in memory with the same lifetimes (visitor ids then differ between processes until Redis is
 * back; documented in docs/COLLECTION.md).
 */
export interface SaltKind {
  name: string;
  /** Length of one rotation period. */
  periodMs: number;
  /** How long a salt is kept after creation, then deleted. */
  keepMs: number;
}

export const DAILY: SaltKind = { name: 'day', periodMs: 86_400_000, keepMs: 48 * 3_600_000 };
export const SESSION_WINDOW: SaltKind = { name: 'window', periodMs: 30 * 60_000, keepMs: 60 * 60_000 };

interface Cached { salt: string; expiresAt: number }

export class SaltStore {
  private cache = new Map<string, Cached>();
  private pending = new Map<string, Promise<string>>();

  constructor(private readonly redis: RedisHandle) {}

  /**
   * Salt of period number `period` (= floor(ms / periodMs)), created when missing. A remembered salt
   * is returned as is, without a promise: that is the per-event case.
   */
  salt(kind: SaltKind, period: number, nowMs: number): string | Promise<string> {
    const key = `${kind.name}:${period}`;
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > nowMs) return hit.salt;
    let p = this.pending.get(key);
    if (!p) {
      p = this.fetch(kind, period, key, nowMs).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  /**
   * The salt of a past period if it still exists, never creating one (previous-period lookups). A
   * miss is remembered for a minute so a fresh install does not ask Redis on every event.
   */
  existing(kind: SaltKind, period: number, nowMs: number): string | null | Promise<string | null> {
    const key = `${kind.name}:${period}`;
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > nowMs) return hit.salt || null;
    if (!this.redis.isUp()) return null;
    return this.lookupExisting(kind, period, key, nowMs);
  }

  private async lookupExisting(kind: SaltKind, period: number, key: string, nowMs: number): Promise<string | null> {
    const v = await this.redis.client.get(this.redisKey(key)).catch(() => null);
    this.remember(key, v ?? '', v ? expiry(kind, period) : Math.min(expiry(kind, period), nowMs + 60_000), nowMs);
    return v;
  }

  private redisKey(key: string) {
    return `${this.redis.prefix}:ingest:salt:${key}`;
  }

  /** Memory holds a salt no longer than Redis does, and forgets expired ones on every write. */
  private remember(key: string, salt: string, expiresAt: number, nowMs: number) {
    this.cache.set(key, { salt, expiresAt });
    for (const [k, c] of this.cache) if (c.expiresAt <= nowMs) this.cache.delete(k);
  }

  private async fetch(kind: SaltKind, period: number, key: string, nowMs: number): Promise<string> {
    const fresh = randomBytes(32).toString('hex');
    const expiresAt = expiry(kind, period);
    let salt = fresh;
    if (this.redis.isUp() && expiresAt > nowMs) {
      try {
        const rk = this.redisKey(key);
        const set = await this.redis.client.set(rk, fresh, 'PX', expiresAt - nowMs, 'NX');
        salt = set === 'OK' ? fresh : (await this.redis.client.get(rk)) ?? fresh;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'salt: redis failed, using a process-local salt');
      }
    }
    this.remember(key, salt, expiresAt, nowMs);
    return salt;
  }
}

const expiry = (kind: SaltKind, period: number) => period * kind.periodMs + kind.keepMs;
