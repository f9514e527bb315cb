import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AppContext } from '../../api/context';
import type { z } from 'zod';
import { AppError, invalidRequest, shuttingDown } from '../../core/errors';
import { logger } from '../../core/logger';
import { outageError } from '../../api/errors';
import { COMMANDS } from './commands';

/**
 * The admin socket: HTTP over a unix socket whose file permissions (0600) are the access control.
 * `POST /<group>/<command>?arg=value` runs one command; the request body, if any, is handed to the
 * command as a stream (events import). Answers `{...}` or `{error: {code, message}}`.
 */
export async function startAdminServer(ctx: AppContext, socketPath: string): Promise<() => Promise<void>> {
  mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  if (existsSync(socketPath)) {
    // A socket nobody answers on is a killed process's leftover: replace it. One that answers belongs
    // to a running server: taking it over sent that server's CLI commands (key create too) to this
    // one's database, and this one's exit then removed the file from under it.
    if (await answers(socketPath)) {
      throw new Error(`TALLY_ADMIN_SOCKET: ${socketPath} is the admin socket of another running Tally server; give each server its own`);
    }
    unlinkSync(socketPath);
  }
  // Flags travel in the query string: a long one (a --sites list of hundreds of uuids, an over-long
  // --name) must reach the command's own check, not Node's 16 KB header limit (431, no flag named).
  const active = new Map<http.IncomingMessage, Promise<void>>();
  const shutdown = new AbortController();
  const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    if (shutdown.signal.aborted) return refuseLate(req, res);
    const done = handle(ctx, req, res, shutdown.signal).finally(() => active.delete(req));
    active.set(req, done);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket file is its own access control: created 0600 (listen binds synchronously, so the
    // process-wide umask is narrowed only for that call), never world-connectable for a moment.
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath, resolve);
    } finally {
      process.umask(umask);
    }
  });
  chmodSync(socketPath, 0o600); // an inherited umask cannot widen it either
  return () => {
    shutdown.abort();
    return closeAdmin(server, active);
  };
}

/**
 * Stop accepting commands. One still receiving its body (an import reading its file) is cut at once:
 * its lines are only staged so far, so it stores nothing and can simply be run again. One whose body
 * is in (an import writing its events) was told by the aborted signal to stop before its next pass,
 * which it answers with 503 shutting_down having stored nothing; its last step (the copy into events)
 * is waited for, so it is never cut half-written, and so is every command's own clean-up: storage
 * closes after them. Before, the close waited for every import to finish, and a shutdown during a
 * long one hit the 20 s limit and left the passes already done stored.
 */
async function closeAdmin(server: http.Server, active: Map<http.IncomingMessage, Promise<void>>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const req of active.keys()) if (!req.complete) req.socket.destroy();
  server.closeIdleConnections();
  // Every command's own work (a cut import's clean-up included) ends before storage is closed under it.
  await Promise.allSettled([...active.values()]);
  server.closeIdleConnections(); // the connections those commands answered on, kept alive by their clients
  await closed;
}

/**
 * A request that came after shutdown began, on a connection accepted just before it (Node counts a
 * new connection as busy, so closing idle ones spares it): closeAdmin's cut has passed, so a command
 * started now would be neither cut nor waited for, and an import reading its file held the server to
 * the 20 s limit (exit 1). It runs nothing: one sending a body is cut as closeAdmin cuts one, any
 * other is answered 503 shutting_down.
 */
function refuseLate(req: http.IncomingMessage, res: http.ServerResponse): void {
  const sendsBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (sendsBody) {
    logger.warn({ err: 'aborted' }, 'admin command cut before its body was in');
    req.socket.destroy();
    return;
  }
  res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify(shuttingDown('it runs no new admin command').toBody()));
}

/** Whether a server accepts connections on the unix socket at `socketPath`. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => { probe.destroy(); resolve(true); });
    probe.once('error', () => resolve(false));
  });
}

/** The first problem, named by its command-line flag: `--domain: must be a bare hostname ...`. */
function flagError(error: z.ZodError): AppError {
  const first = error.issues[0];
  const flag = first?.path.length ? `--${first.path.join('.')}` : 'arguments';
  const message = first?.message ?? 'invalid';
  return invalidRequest(message.startsWith('--') ? message : `${flag}: ${message}`);
}

async function handle(ctx: AppContext, req: http.IncomingMessage, res: http.ServerResponse, shutdown: AbortSignal) {
  const send = (status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  try {
    const url = new URL(req.url ?? '/', 'http://admin');
    const name = url.pathname.split('/').filter(Boolean).join(' ');
    const command = COMMANDS[name];
    if (!command || req.method !== 'POST') throw new AppError(404, 'not_found', `unknown command "${name}"`);
    const parsed = command.args.safeParse(Object.fromEntries(url.searchParams));
    if (!parsed.success) throw flagError(parsed.error);
    send(200, await command.run(ctx, parsed.data, req, shutdown));
  } catch (err) {
    if (err instanceof AppError) return send(err.status, err.toBody());
    const outage = outageError(err);
    if (outage) {
      logger.warn({ err: (err as Error).message }, 'admin command: storage unreachable');
      return send(outage.status, outage.toBody());
    }
    // A body cut off (the CLI went away, or shutdown cut an import still reading its file) is expected;
    // any other failure while it streamed (storage refusing the staging rows) stays an error.
    const e = err as NodeJS.ErrnoException;
    if (!req.complete && (e.code === 'ECONNRESET' || e.message === 'aborted')) {
      return logger.warn({ err: e.message }, 'admin command cut before its body was in');
    }
    logger.error({ err }, 'admin command failed');
    send(500, { error: { code: 'internal', message: (err as Error).message } });
  }
}
