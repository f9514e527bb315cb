import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { migrate } from '../clickhouse/migrate';
import { onMetaWrite } from '../clickhouse/meta';
import { openStore, type Store } from '../clickhouse/store';
import type { Config } from '../core/config';
import { logger } from '../core/logger';
import { connectRedis, type RedisHandle } from '../infra/redis';
import { RedisGeneration } from '../infra/redis-generation';
import { AUTH_TABLES, AuthCache, LocalGeneration } from '../model/auth-cache';
import { Repos } from '../model/repos';
import { startQueues } from '../workers/queues';
import { startAdminServer } from '../cli/admin/server';
import { createApp } from './app';
import type { AppContext } from './context';
import { RAW_HANDLERS } from './modules';
import { loadTls } from './tls';

export interface Running {
  ctx: AppContext;
  httpsPort: number;
  httpPort: number;
  stop(): Promise<void>;
}

/**
 * Boot the whole service: storage and migrations, Redis and queues, then (for the api role) the HTTPS
 * and plain-HTTP listeners and the admin socket. Tests call this with their own config.
 */
export async function startService(config: Config, opts: { redisPrefix?: string } = {}): Promise<Running> {
  const store = openStore({ ...config.clickhouse, dataDir: config.dataDir });
  await migrate(store);
  const repos = new Repos(store);
  const redis = connectRedis(config.redisUrl, opts.redisPrefix ?? 'tally');
  const stopAuthCache = attachAuthCache(repos, store, redis);
  const runWorkers = config.role !== 'api';
  const queues = startQueues(redis, { store, repos }, { runWorkers });
  const ctx: AppContext = { config, store, repos, redis, queues, onShutdown: [] };

  const servers: (http.Server | https.Server)[] = [];
  let httpsPort = 0;
  let httpPort = 0;
  let closeAdmin = async () => undefined as void;
  if (config.role !== 'worker') {
    const app = createApp(ctx);
    const raw = RAW_HANDLERS.map((m) => m(ctx));
    const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
      for (const h of raw) if (h(req, res)) return;
      app(req, res);
    };
    const tls = await loadTls(config);
    const secure = https.createServer({ ...tls }, listener);
    const plain = http.createServer(listener);
    httpsPort = await listen(secure, config.httpsPort, config.host);
    httpPort = await listen(plain, config.httpPort, config.host);
    servers.push(secure, plain);
    closeAdmin = await startAdminServer(ctx, config.adminSocket);
  }
  logger.info({ httpsPort, httpPort, role: config.role, embedded: store.embedded }, 'tally started');

  let stopping: Promise<void> | null = null;
  return {
    ctx,
    httpsPort,
    httpPort,
    stop: () =>
      (stopping ??= (async () => {
        // Stop accepting, then flush what was acknowledged, then close storage last.
        await Promise.all(servers.map((s) => new Promise<void>((r) => { s.close(() => r()); s.closeIdleConnections?.(); })));
        await closeAdmin();
        for (const fn of ctx.onShutdown) await fn().catch((err: Error) => logger.error({ err }, 'shutdown hook failed'));
        await queues.close();
        stopAuthCache();
        await redis.close();
        await store.close();
      })()),
  };
}

/**
 * Embedded storage means one process, so the cache's generation is local; with a ClickHouse server
 * several processes write metadata, so it lives in Redis (see model/auth-cache.ts).
 */
function attachAuthCache(repos: Repos, store: Store, redis: RedisHandle): () => void {
  const cache = new AuthCache(store.embedded ? new LocalGeneration() : new RedisGeneration(redis));
  repos.authCache = cache;
  return onMetaWrite(async (change) => {
    if (change.database === store.database && AUTH_TABLES.has(change.table)) await cache.invalidate();
  });
}

function listen(server: http.Server | https.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}
