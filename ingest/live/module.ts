import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../../clickhouse/store';
import type { Config } from '../../core/config';
import type { RedisHandle } from '../../infra/redis';
import type { Repos } from '../../model/repos';
import { Collector } from './collector';
import { eventHandler } from './handler';

/**
 * Wiring of live collection into a running service (registered in api/modules.ts RAW_HANDLERS). The
 * collector's flush is put first among the shutdown hooks: on SIGTERM accepted events are written
 * before anything else closes.
 */
export interface IngestContext {
  config: Config;
  store: Store;
  repos: Repos;
  redis: RedisHandle;
  onShutdown: (() => Promise<void>)[];
}

const collectors = new WeakMap<object, Collector>();

export function collectionModule(ctx: IngestContext): (req: IncomingMessage, res: ServerResponse) => boolean {
  const collector = new Collector({
    store: ctx.store, repos: ctx.repos, redis: ctx.redis, geoipDb: ctx.config.geoipDb, maxPending: ctx.config.ingestMaxPending,
  });
  collectors.set(ctx, collector);
  ctx.onShutdown.unshift(() => collector.close());
  return eventHandler(collector, ctx.config.trustProxy);
}

/** The running collector of a service (admin `events stats`, tests). */
export const collectorOf = (ctx: object): Collector | undefined => collectors.get(ctx);
