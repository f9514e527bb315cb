import pino from 'pino';

/** One pino logger; request loggers are children carrying the request id. */
export const logger = pino({
  level: process.env.TALLY_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: { service: 'tally' },
});
export type Logger = pino.Logger;
