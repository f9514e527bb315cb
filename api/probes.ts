import express from 'express';
import { rollupFeeder } from '../clickhouse/feeder';
import { methodNotAllowed } from '../core/errors';
import type { AppContext } from './context';
import { sendError } from './errors';

/**
 * Liveness and readiness, on both ports and in every role (the worker role serves only these).
 * Readiness follows storage alone: with Redis down the service still serves reads and ingest, so it
 * stays in rotation and reports `redis: "down"`.
 */
export function probeRouter(ctx: AppContext): express.Router {
  const router = express.Router({ caseSensitive: true });
  router.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  router.get('/readyz', async (_req, res) => {
    const storage = await ctx.store.ping();
    const redis = ctx.redis.isUp();
    // Catching up after a restart, or behind after a failed feed, keeps the service ready: ingest is
    // stored meanwhile; reports wait or answer 503 until the rollups are current.
    const rollups = rollupFeeder(ctx.store).health;
    res.status(storage ? 200 : 503).json({
      status: storage ? 'ready' : 'not_ready', storage: storage ? 'up' : 'down', redis: redis ? 'up' : 'down', rollups,
    });
  });
  // Another method is 405 with Allow, as the API and /api/event answer it (was a 404 "page not found").
  router.all(['/healthz', '/readyz'], (req, res) => sendError(res, methodNotAllowed(req.method, ['GET'])));
  return router;
}
