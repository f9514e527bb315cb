import path from 'node:path';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { onMetaWrite, shareRowTurns } from '../clickhouse/meta';
import { rollupFeeder } from '../clickhouse/feeder';
import { redisFeedLock } from '../clickhouse/feed-lock';
import { redisLeases } from '../infra/lease';
import { migrateShared } from '../clickhouse/migrate';
import { openStore, type Store } from '../clickhouse/store';
import { redactUrl, type Config } from '../core/config';
import { logger } from '../core/logger';
import { connectRedis, type RedisHandle } from '../infra/redis';
import { RedisGeneration } from '../infra/redis-generation';
import { AUTH_TABLES, AuthCache, LocalGeneration } from '../model/auth-cache';
import { Repos } from '../model/repos';
import { startQueues } from '../workers/queues';
import { loadSecretKey, secretBox } from '../infra/secrets';
import { startAdminServer } from '../cli/admin/server';
import { answerClientErrors } from './client-errors';
import { createApp } from './app';
import type { AppContext } from './context';
import { RAW_HANDLERS } from './modules';
import { probeRouter } from './probes';
import { loadTls, type TlsPair } from './tls';

export interface Running {
  ctx: AppContext;
  httpsPort: number;
  httpPort: number;
  /** Resolves when the rollups have caught up with events an earlier process stored unfed (not awaited by start). */
  rollupsCaughtUp: Promise<void>;
  stop(): Promise<void>;
}

/** A row lease outlives a process that died holding it by at most this. */
const ROW_LEASE_MS = 10_000;

/** The migration lease is renewed while held; a process that died migrating blocks the next for at most this. */
const MIGRATION_LEASE_MS = 30_000;

/** How long in-flight requests get to finish on shutdown before their connections are cut. */
const DRAIN_MS = 10_000;

/**
 * Boot the whole service: storage and migrations, Redis and queues, then (api and all roles) the
 * HTTPS and plain-HTTP listeners and the admin socket; the worker role listens on the plain port for
 * the probes only. Whatever was opened is closed again if a later step fails. Tests call this with
 * their own config.
 */
export async function startService(config: Config, opts: { redisPrefix?: string } = {}): Promise<Running> {
  // Checked before anything is opened: a bad TLS setting must not leave storage or Redis behind.
  const tls = config.role === 'worker' ? null : await loadTls(config);
  const store = openStorage(config);
  const closers: (() => Promise<void>)[] = [() => store.close()];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch((err: Error) => logger.error({ err }, 'close failed'));
  };
  try {
    await reachStorage(store, config);
    const redis = connectRedis(config.redisUrl, opts.redisPrefix ?? config.redisPrefix);
    closers.push(() => redis.close());
    // Server mode: processes starting together migrate one at a time (Redis lease), so each
    // migration is applied once.
    if (!store.embedded) await redis.attempted;
    await migrateShared(store, store.embedded ? null : redisLeases(redis, 'migrate', MIGRATION_LEASE_MS));
    const repos = new Repos(store);
    const feeder = rollupFeeder(store);
    // With a ClickHouse server other processes feed the same rollups and edit the same rows: one at
    // a time, by lease.
    if (!store.embedded) {
      feeder.useLock(redisFeedLock(redis, store.database));
      shareRowTurns(store, redisLeases(redis, 'row-turn', ROW_LEASE_MS));
    }
    await redis.attempted;
    // Not awaited: after a crash with a large unfed backlog the catch-up takes minutes, and the probes,
    // ingest and the admin socket must answer meanwhile (a liveness probe would restart the process
    // before it caught up, again and again). Reports wait for it, up to a few seconds, then answer 503.
    const rollupsCaughtUp = feeder.start();
    // Stopped after the ingest flush (closers run in reverse): flushed events reach the rollups too.
    closers.push(() => feeder.stop());
    const stopAuthCache = attachAuthCache(repos, store, redis);
    closers.push(async () => stopAuthCache());
    const secrets = secretBox(loadSecretKey(config.secretKey, config.dataDir));
    const queues = startQueues(redis, { store, repos, config, secrets }, { runWorkers: config.role !== 'api' });
    closers.push(() => queues.close());
    // A started service has its repeatable jobs scheduled (when Redis answers at all).
    await redis.attempted;
    await queues.settled(2000);
    const ctx: AppContext = { config, store, repos, redis, queues, secrets, onShutdown: [] };
    // Shutdown hooks (ingest flushes) run after the listeners stop and before queues and storage close.
    closers.push(async () => {
      for (const fn of ctx.onShutdown) await fn().catch((err: Error) => logger.error({ err }, 'shutdown hook failed'));
    });
    const ports = tls ? await serveApi(ctx, tls, closers) : await serveProbes(ctx, closers);
    logger.info({ ...ports, role: config.role, embedded: store.embedded }, 'tally started');
    let stopping: Promise<void> | null = null;
    return { ctx, ...ports, rollupsCaughtUp, stop: () => (stopping ??= closeAll()) };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * The first statement, with a failure that names what to fix: the engine's own message alone ("connect
 * ECONNREFUSED", "Failed to create connection for path") named neither the variable nor the likely cause.
 */
async function reachStorage(store: Store, config: Config): Promise<void> {
  try {
    await store.query('SELECT 1');
  } catch (err) {
    throw storageError(config, err);
  }
}

/** chDB refuses a second process on one data directory when the connection is made. */
function openStorage(config: Config): Store {
  try {
    return openStore({ ...config.clickhouse, dataDir: config.dataDir });
  } catch (err) {
    throw storageError(config, err);
  }
}

function storageError(config: Config, err: unknown): Error {
  const why = (err as Error).message.split('\n')[0];
  if (/^(CLICKHOUSE|TALLY)_[A-Z_]+\b/.test(why)) return err as Error; // already names its variable
  return new Error(config.clickhouse.url
    ? `CLICKHOUSE_URL: cannot reach ClickHouse at ${redactUrl(config.clickhouse.url)} (${why})`
    : `TALLY_DATA_DIR: cannot open the embedded ClickHouse in ${path.join(config.dataDir, 'clickhouse')} (${why}); is another Tally server running on this data directory?`);
}

async function serveApi(ctx: AppContext, tls: TlsPair, closers: (() => Promise<void>)[]) {
  const app = createApp(ctx);
  const raw = RAW_HANDLERS.map((m) => m(ctx));
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    for (const h of raw) if (h(req, res)) return;
    app(req, res);
  };
  const secure = https.createServer({ ...tls }, listener);
  const plain = http.createServer(listener);
  // Both listeners and the admin socket stop at once: one after another, their waits added up (past
  // the 20 s limit, before the ingest flush) and the later ones heard of the shutdown late.
  const stopping: (() => Promise<void>)[] = [];
  closers.push(async () => void (await Promise.all(stopping.map((stop) => stop()))));
  const httpsPort = await listen(secure, 'TALLY_HTTPS_PORT', ctx.config.httpsPort, ctx.config.host, stopping);
  const httpPort = await listen(plain, 'TALLY_HTTP_PORT', ctx.config.httpPort, ctx.config.host, stopping);
  stopping.push(await startAdminServer(ctx, ctx.config.adminSocket));
  return { httpsPort, httpPort };
}

/** The worker role: /healthz and /readyz on the plain port, for orchestrators. */
async function serveProbes(ctx: AppContext, closers: (() => Promise<void>)[]) {
  const app = express();
  app.disable('x-powered-by');
  app.use(probeRouter(ctx));
  app.use((_req, res) => void res.status(404).json({ error: { code: 'not_found', message: 'The worker role serves /healthz and /readyz only.' } }));
  const httpPort = await listen(http.createServer(app), 'TALLY_HTTP_PORT', ctx.config.httpPort, ctx.config.host, closers);
  return { httpsPort: 0, httpPort };
}

/**
 * Embedded storage means one process, so the cache's generation is local; with a ClickHouse server
 * several processes write metadata, so it lives in Redis (see model/auth-cache.ts).
 */
function attachAuthCache(repos: Repos, store: Store, redis: RedisHandle): () => void {
  const generation = store.embedded ? new LocalGeneration() : new RedisGeneration(redis);
  const cache = new AuthCache(generation);
  repos.authCache = cache;
  // Ingest's site cache hears of other processes' site saves through the same counter (sites are
  // among AUTH_TABLES, so every save bumps it). Embedded: one process, onSiteChange says it all.
  if (!store.embedded) repos.sharedGeneration = generation;
  return onMetaWrite(async (change) => {
    if (change.database === store.database && AUTH_TABLES.has(change.table)) await cache.invalidate();
  });
}

function listenRefusal(code: string | undefined, portVar: string, port: number, host: string): string {
  if (code === 'EADDRINUSE') return `${portVar}: port ${port} is already in use`;
  if (code === 'EACCES') return `${portVar}: this user may not listen on port ${port}`;
  return `TALLY_HOST: cannot listen on "${host}"`;
}

/**
 * Listen, and register the matching close: stop accepting, let in-flight requests finish, then cut.
 * A refusal names the variables an operator would change (a busy port, an address not on this host).
 */
async function listen(server: http.Server, portVar: string, port: number, host: string, closers: (() => Promise<void>)[]): Promise<number> {
  answerClientErrors(server);
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(`${listenRefusal(err.code, portVar, port, host)} (${err.code ?? err.message})`));
    });
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
        cut.unref();
        // Connections still open (a forwarder's keep-alive) are told to go with their next answer;
        // otherwise a busy one kept sending until the cut, and the requests it cut were stored but
        // never acknowledged (a retry would count them twice).
        server.prependListener('request', (_req, res: http.ServerResponse) => void (res.shouldKeepAlive = false));
        // A request in flight at the signal was answered keep-alive: its connection, idle after that
        // answer, is closed now rather than at Node's 5 s idle timeout.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        sweep.unref();
        server.close(() => {
          clearTimeout(cut);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  );
  return bound;
}
