import pino from 'pino';

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
// An invalid TALLY_LOG_LEVEL must not crash here, before loadConfig can name the problem.
const fromEnv = process.env.TALLY_LOG_LEVEL;
const level = fromEnv && LEVELS.has(fromEnv) ? fromEnv : process.env.NODE_ENV === 'test' ? 'silent' : 'info';

/** One pino logger; request loggers are children carrying the request id. */
export const logger = pino({ level, base: { service: 'tally' } });
export type Logger = pino.Logger;
