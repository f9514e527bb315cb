import { loadConfig } from './core/config';
import { logger } from './core/logger';
import { startService } from './api/runtime';

/** `npm start`: the whole service in one process (embedded storage), or one role with a server. */
async function main() {
  const config = loadConfig();
  logger.level = config.logLevel;
  const running = await startService(config);
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'shutting down: finishing requests in flight (up to 10 s), then flushing ingest');
    const force = setTimeout(() => {
      logger.error('shutdown took over 20 s: exiting before it finished');
      process.exit(1);
    }, 20_000);
    force.unref();
    running.stop().then(() => process.exit(0), (err) => { logger.error({ err }, 'shutdown failed'); process.exit(1); });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: Error) => {
  logger.fatal({ err: err.message }, 'tally failed to start');
  process.exit(1);
});
