import Redis, { type RedisOptions } from 'ioredis';
import { logger } from '../core/logger';

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
  /** A new connection for BullMQ (which needs maxRetriesPerRequest: null). */
  duplicateForQueue(): Redis;
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
      logger.warn({ url, err: err?.message }, 'redis unreachable: queues answer 503, rate limits and sessions use memory');
    }
  };
  client.on('error', down);
  client.on('end', () => down());
  client.connect().catch(down);
  const queueOptions: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: false, retryStrategy, lazyConnect: true };
  return {
    client,
    url,
    prefix,
    isUp: () => up,
    duplicateForQueue: () => new Redis(url, queueOptions),
    onUp: (fn) => {
      upListeners.push(fn);
      if (up) fn();
    },
    async close() {
      client.disconnect();
    },
  };
}
