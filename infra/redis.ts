import Redis, { type RedisOptions } from 'ioredis';
import { logger } from '../core/logger';
import { redactUrl } from '../core/config';

/**
 * Redis is optional at run time: when it is unreachable the service starts anyway, serves reads and
 * ingest, says so on /readyz, and queue-backed endpoints answer 503. One warning is logged per outage.
 * A Redis that stalls without closing the connection counts as unreachable too (REDIS_ANSWER_MS).
 */
export interface RedisHandle {
  /** For commands that must fail fast when Redis is down (rate limits, session state). */
  readonly client: Redis;
  readonly url: string;
  readonly prefix: string;
  isUp(): boolean;
  /** Resolves after the first connection attempt, whether it succeeded or not. */
  readonly attempted: Promise<void>;
  /** A new connection for BullMQ (which needs maxRetriesPerRequest: null). */
  duplicateForQueue(): Redis;
  /**
   * Connection OPTIONS for a BullMQ Queue or Worker, so BullMQ opens and owns the connection. Handing
   * it an ioredis instance instead makes the connection "shared", and closing one that is still
   * connecting then surfaces an unhandled 'Connection is closed' error.
   */
  bullConnection(): RedisOptions & { url: string };
  onUp(fn: () => void): void;
  close(): Promise<void>;
}

/**
 * How long the fast client waits for Redis to say anything while a command is outstanding. A healthy
 * Redis answers in well under a millisecond, a busy one (or one forking for a snapshot) in tens. Not
 * shorter: ioredis times this with a plain timer, and after the event loop was held longer than this
 * (a long synchronous stretch, a large GC) the timer runs before the answer waiting in the socket is
 * read, dropping a healthy connection (a false outage: sessions and rate limits briefly per process).
 * The shared generation read gives up sooner (infra/redis-generation.ts) as a lookup can go on
 * without it. Past it the connection counts as stalled (a paused process, a peer dead without a reset,
 * a network black hole, none of which closes it): it is dropped, every command waiting on it fails at
 * once, Redis is down (the fallbacks of an outage: memory for rate limits and sessions, 503 for
 * queues) and reconnecting begins; it is up again once a new connection answers its ready check. So a
 * stall costs a request at most this one wait, and later requests none. Without it every command
 * waited for as long as the stall lasted, and with them every request that touched Redis.
 */
export const REDIS_ANSWER_MS = 2000;

export function connectRedis(url: string, prefix = 'tally'): RedisHandle {
  let up = false;
  let warned = false;
  const upListeners: (() => void)[] = [];
  const retryStrategy = (times: number) => Math.min(times * 500, 5000);
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    // A command in flight when the connection drops fails at once (its caller falls back) instead of
    // waiting for a reconnect to resend it.
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    socketTimeout: REDIS_ANSWER_MS,
    // Each command's own bound, for a Redis that answers, but too slowly for the socket to fall silent.
    // Longer than socketTimeout, so a silent connection is dropped (Redis down) before any caller sees
    // its command time out: none then tries Redis again while it still counts as up.
    commandTimeout: 2 * REDIS_ANSWER_MS,
    retryStrategy,
  });
  client.on('ready', () => {
    up = true;
    if (warned) logger.info('redis reachable again');
    warned = false;
    for (const fn of upListeners) fn();
  });
  const down = (err?: Error) => {
    up = false;
    if (!warned) {
      warned = true;
      logger.warn({ url: redactUrl(url), err: err?.message }, 'redis unreachable: queues answer 503, rate limits and sessions use memory');
    }
  };
  client.on('error', down);
  client.on('end', () => down());
  // Registered after the handlers above, so onUp listeners have run when it resolves.
  const attempted = new Promise<void>((resolve) => {
    client.once('ready', () => resolve());
    client.once('error', () => resolve());
    client.once('end', () => resolve());
  });
  client.connect().catch(down);
  const queueOptions: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: false, retryStrategy, lazyConnect: true };
  return {
    client,
    url,
    prefix,
    isUp: () => up,
    attempted,
    duplicateForQueue: () => new Redis(url, queueOptions),
    bullConnection: () => ({ url, ...queueOptions }),
    onUp: (fn) => {
      upListeners.push(fn);
      if (up) fn();
    },
    async close() {
      client.disconnect();
    },
  };
}
