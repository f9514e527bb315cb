import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import { AppError } from '../../core/errors';
import { logger } from '../../core/logger';
import type { Collector } from './collector';
import { parsePayload } from './payload';

/**
 * POST /api/event as a plain node:http handler in front of Express (Express costs 3-3.5x more CPU
 * per event on this path). Browsers post cross-origin, so every answer carries CORS headers and
 * OPTIONS preflights are answered. Order of refusals: 405 method, 415 content type, 413 size (from
 * Content-Length, then while reading), 400 JSON, 400 payload. The client address is the socket's,
 * or X-Forwarded-For's when the socket is a trusted proxy (TALLY_TRUST_PROXY): that is how a
 * server-side forwarder reports the real visitor, together with the User-Agent it sends.
 */
export const EVENT_PATH = '/api/event';
export const MAX_BODY_BYTES = 16 * 1024;

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'content-type',
  'access-control-max-age': '86400',
};

/** JSON bodies; text/plain is what trackers send to avoid a CORS preflight (and what sendBeacon uses). */
const ACCEPTED_TYPES = new Set(['', 'application/json', 'text/plain']);

function send(res: ServerResponse, status: number, body: object | null, headers: Record<string, string> = {}) {
  const text = body ? JSON.stringify(body) : '';
  res.writeHead(status, { ...CORS, ...(body ? { 'content-type': 'application/json' } : {}), 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const sendError = (res: ServerResponse, err: AppError) => send(res, err.status, err.toBody(), err.headers);

const tooLarge = () => new AppError(413, 'payload_too_large', `The event body must be at most ${MAX_BODY_BYTES} bytes.`);

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge());
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    // A client that goes away mid-body never sends 'end': settle so nothing waits forever.
    req.on('close', () => (req.complete ? undefined : reject(new AppError(400, 'invalid_request', 'The request body was cut short.'))));
  });
}

function precheck(req: IncomingMessage): AppError | null {
  if (req.method !== 'POST') return new AppError(405, 'invalid_request', 'Use POST to send an event.');
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!ACCEPTED_TYPES.has(type)) {
    return new AppError(415, 'unsupported_media_type', 'Send the event as JSON (Content-Type: application/json or text/plain).');
  }
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge();
  return null;
}

function parseJson(body: Buffer): unknown | AppError {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return new AppError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
}

export function eventHandler(collector: Collector, trustProxy: string[]) {
  const trust = proxyaddr.compile(trustProxy);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') return send(res, 204, null);
    const refused = precheck(req);
    if (refused) throw refused;
    const json = parseJson(await readBody(req));
    if (json instanceof AppError) throw json;
    const payload = parsePayload(json);
    if (typeof payload === 'string') throw new AppError(400, 'invalid_request', payload);
    const ip = proxyaddr(req as Parameters<typeof proxyaddr>[0], trust);
    const result = await collector.collect(payload, {
      ip, userAgent: req.headers['user-agent'] ?? '', fromBrowser: typeof req.headers.origin === 'string',
    });
    send(res, 202, result);
  };
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== EVENT_PATH) return false;
    handle(req, res).catch((err: unknown) => {
      if (err instanceof AppError) {
        if (err.status < 500) collector.stats.rejected++;
        if (err.status === 413) res.setHeader('connection', 'close');
        return sendError(res, err);
      }
      // Past validation, a failure is ours (storage): the event was not stored, so say "retry".
      logger.error({ err }, 'event could not be stored');
      sendError(res, new AppError(503, 'overloaded', 'The event could not be stored; retry shortly.', undefined, { 'Retry-After': '5' }));
    });
    return true;
  };
}
