import Redis, { type RedisOptions } from 'ioredis';
import { logger } from '../core/logger';
import { redactUrl } from '../core/config';

/**
 * Redis is optional at run time: when it is unreachable the service starts anyway, serves reads and
 * ingest, says so on /readyz, and queue-backed endpoints answer 503. One warning is logged per outage.
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

export function connectRedis(url: string, prefix = 'tally'): RedisHandle {
  let up = false;
  let warned = false;
  const upListeners: (() => void)[] = [];
  const retryStrategy = (times: number) => Math.min(times * 500, 5000);
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
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
