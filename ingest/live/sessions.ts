import { nowMs } from '../../core/clock';
import { logger } from '../../core/logger';
import type { RedisHandle } from '../../infra/redis';
import type { SessionAttributes } from '../event';

/**
 * Live session state: which session a visitor is in, when it started, when it was last active and the
 * attributes of its first event. Kept in Redis (shared by every API process, expiring on its own 30
 * minutes after the last event), and every state this process saves is also kept in process memory
 * (bounded): while Redis is unreachable sessions go on from there, and once it is back a session the
 * outage started (which Redis never saw) goes on from there too. Without the copy every session that
 * spanned an outage was cut twice, at its start and at its end (4 real sessions read as 7, each extra
 * one a bounce with a wrong entry page). Of Redis's state and memory's, the later-active wins. The
 * memory copy expires by core/clock, the clock the rest of ingest reads, so moving it moves both
 * alike. Reads and writes are batched: one MGET and one EVAL per ingest batch.
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

/**
 * Stored as one JSON array [v, s, st, l, ...attributes in SESSION_KEYS order]: small and quick to parse.
 * Written out field by field (no spread, no keyed loop): this runs twice per event. The unit test
 * checks both against SESSION_KEYS.
 */
export function encodeState(s: SessionState): string {
  const a = s.a;
  return JSON.stringify([
    s.v, s.s, s.st, s.l, a.entry_path, a.entry_hostname, a.referrer, a.referrer_source, a.channel, a.utm_source, a.utm_medium,
    a.utm_campaign, a.utm_term, a.utm_content, a.gad_campaign_id, a.gclid, a.country, a.region, a.city, a.browser, a.browser_version,
    a.os, a.os_version, a.device,
  ]);
}

export function decodeState(text: string): SessionState {
  const r = JSON.parse(text) as never[];
  return {
    v: r[0], s: r[1], st: r[2], l: r[3],
    a: {
      entry_path: r[4], entry_hostname: r[5], referrer: r[6], referrer_source: r[7], channel: r[8], utm_source: r[9], utm_medium: r[10],
      utm_campaign: r[11], utm_term: r[12], utm_content: r[13], gad_campaign_id: r[14], gclid: r[15], country: r[16], region: r[17],
      city: r[18], browser: r[19], browser_version: r[20], os: r[21], os_version: r[22], device: r[23],
    },
  };
}
const TTL_MS = SESSION_GAP_MS + 60_000;
/**
 * The copy's bound: a state decoded from Redis holds its own strings, about 1.2 KB of heap each (233 MB
 * for 200,000, measured), so 50,000 live sessions per process (about 60 MB); beyond it the least
 * recently active go first, and only an outage would miss them.
 */
const MEMORY_LIMIT = 50_000;
const SAVE_SCRIPT = "local ttl = ARGV[#ARGV] for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[i], 'PX', ttl) end return #KEYS";

export class LiveSessions {
  private memory = new Map<string, { state: SessionState; expiresAt: number }>();

  constructor(private readonly redis: RedisHandle) {}

  private key(k: string) {
    return `${this.redis.prefix}:ingest:s:${k}`;
  }

  async load(keys: string[]): Promise<Map<string, SessionState>> {
    const out = new Map<string, SessionState>();
    if (keys.length === 0) return out;
    let shared: (string | null)[] = [];
    if (this.redis.isUp()) {
      try {
        shared = await this.redis.client.mget(...keys.map((k) => this.key(k)));
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'sessions: redis read failed, using memory');
      }
    }
    const now = nowMs();
    for (let i = 0; i < keys.length; i++) {
      const v = shared[i];
      const fromRedis = v ? decodeState(v) : undefined;
      const m = this.memory.get(keys[i]);
      const fromMemory = m && m.expiresAt > now ? m.state : undefined;
      const state = fromRedis && fromMemory ? (fromMemory.l > fromRedis.l ? fromMemory : fromRedis) : fromRedis ?? fromMemory;
      if (state) out.set(keys[i], state);
    }
    return out;
  }

  async save(states: Map<string, SessionState>): Promise<void> {
    if (states.size === 0) return;
    this.remember(states);
    if (this.redis.isUp()) {
      try {
        await this.redis.client.call('EVAL', this.saveArgs(states));
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'sessions: redis write failed, using memory');
      }
    }
  }

  /**
   * One EVAL setting every key (KEYS) to its state (ARGV) with the TTL (last ARGV): a pipeline of
   * SETs cost the client about 5 µs of CPU per key (a command object and a promise each), this one
   * command about 1 µs. Same keys, values and expiry as SET ... PX.
   */
  private saveArgs(states: Map<string, SessionState>): (string | number)[] {
    const args: (string | number)[] = [SAVE_SCRIPT, states.size];
    for (const k of states.keys()) args.push(this.key(k));
    for (const s of states.values()) args.push(encodeState(s));
    args.push(TTL_MS);
    return args;
  }

  private remember(states: Map<string, SessionState>) {
    const now = nowMs();
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
