import { logger } from '../../core/logger';
import type { RedisHandle } from '../../infra/redis';
import { SESSION_KEYS, type SessionAttributes } from '../event';

/**
 * Live session state: which session a visitor is in, when it started, when it was last active and the
 * attributes of its first event. Kept in Redis (shared by every API process, expiring on its own 30
 * minutes after the last event) and in process memory while Redis is unreachable. Reads and writes
 * are batched: one MGET and one pipeline per ingest batch, not a round trip per event.
 */
export interface SessionState {
  /** visitor_id */
  v: string;
  /** session_id */
  s: string;
  /** session start, ms */
  st: number;
  /** last event, ms */
  l: number;
  a: SessionAttributes;
}

export const SESSION_GAP_MS = 30 * 60_000;

/** Stored as one JSON array [v, s, st, l, ...attributes in SESSION_KEYS order]: small and quick to parse. */
export function encodeState(s: SessionState): string {
  const a = s.a as unknown as Record<string, unknown>;
  return JSON.stringify([s.v, s.s, s.st, s.l, ...SESSION_KEYS.map((k) => a[k])]);
}

export function decodeState(text: string): SessionState {
  const arr = JSON.parse(text) as unknown[];
  const a: Record<string, unknown> = {};
  SESSION_KEYS.forEach((k, i) => (a[k] = arr[4 + i]));
  return { v: arr[0] as string, s: arr[1] as string, st: arr[2] as number, l: arr[3] as number, a: a as unknown as SessionAttributes };
}
const TTL_MS = SESSION_GAP_MS + 60_000;
const MEMORY_LIMIT = 200_000;

export class LiveSessions {
  private memory = new Map<string, { state: SessionState; expiresAt: number }>();

  constructor(private readonly redis: RedisHandle) {}

  private key(k: string) {
    return `${this.redis.prefix}:ingest:s:${k}`;
  }

  async load(keys: string[]): Promise<Map<string, SessionState>> {
    const out = new Map<string, SessionState>();
    if (keys.length === 0) return out;
    if (this.redis.isUp()) {
      try {
        const values = await this.redis.client.mget(...keys.map((k) => this.key(k)));
        values.forEach((v, i) => v && out.set(keys[i], decodeState(v)));
        return out;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'sessions: redis read failed, using memory');
      }
    }
    const now = Date.now();
    for (const k of keys) {
      const m = this.memory.get(k);
      if (m && m.expiresAt > now) out.set(k, m.state);
    }
    return out;
  }

  async save(states: Map<string, SessionState>): Promise<void> {
    if (states.size === 0) return;
    if (this.redis.isUp()) {
      try {
        const pipe = this.redis.client.pipeline();
        for (const [k, s] of states) pipe.set(this.key(k), encodeState(s), 'PX', TTL_MS);
        await pipe.exec();
        return;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'sessions: redis write failed, using memory');
      }
    }
    this.remember(states);
  }

  private remember(states: Map<string, SessionState>) {
    const now = Date.now();
    for (const [k, state] of states) {
      this.memory.delete(k);
      this.memory.set(k, { state, expiresAt: now + TTL_MS });
    }
    // Oldest first (Map insertion order): drop the expired, then whatever exceeds the bound.
    for (const [k, m] of this.memory) {
      if (m.expiresAt > now && this.memory.size <= MEMORY_LIMIT) break;
      this.memory.delete(k);
    }
  }
}
