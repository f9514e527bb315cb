import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import proxyaddr from 'proxy-addr';
import { AppError, methodNotAllowed } from '../../core/errors';
import { logger } from '../../core/logger';
import type { Collector, CollectResult } from './collector';
import { parsePayload } from './payload';

/**
 * POST /api/event as a plain node:http handler in front of Express (Express costs 3-3.5x more CPU
 * per event on this path). Browsers post cross-origin, so every answer carries CORS headers and
 * OPTIONS preflights are answered. Order of refusals: 405 method, 415 content type or encoding, 413
 * size (from Content-Length, then while reading, then decoded), 400 encoding, 400 JSON, 400 payload.
 * The client address is the socket's, or X-Forwarded-For's when the socket is a trusted proxy
 * (TALLY_TRUST_PROXY): that is how a server-side forwarder reports the real visitor, together with
 * the User-Agent it sends.
 *
 * This is the hottest code of the service (docs/PERFORMANCE.md, "JavaScript per event"): plain
 * callbacks instead of promise chains where nothing is awaited, and header lists built once.
 */
export const EVENT_PATH = '/api/event';
export const MAX_BODY_BYTES = 16 * 1024;

/** Flat [name, value, ...] lists: writeHead takes them as they are, no object spread per answer. */
const CORS: readonly string[] = [
  'access-control-allow-origin', '*',
  'access-control-allow-methods', 'POST, OPTIONS',
  'access-control-allow-headers', 'content-type',
  'access-control-max-age', '86400',
];
const NO_CONTENT = [...CORS, 'content-length', '0'];
/** The JSON answer's list; a copy per answer gets its content-length in the last slot. */
const JSON_HEADERS = [...CORS, 'content-type', 'application/json', 'content-length', ''];
const QUERY = 63; // '?'

/** JSON bodies; text/plain is what trackers send to avoid a CORS preflight (and what sendBeacon uses). */
const ACCEPTED_TYPES = new Set(['', 'application/json', 'text/plain']);

function sendJson(res: ServerResponse, status: number, body: object, extra?: Record<string, string>) {
  const text = JSON.stringify(body);
  const headers = JSON_HEADERS.slice();
  headers[headers.length - 1] = String(Buffer.byteLength(text));
  if (extra) {
    // Retry-After is not a CORS-safelisted header: a cross-origin tracker reads it only if exposed.
    for (const name of Object.keys(extra)) headers.push(name, extra[name]);
    headers.push('access-control-expose-headers', Object.keys(extra).join(', '));
  }
  res.writeHead(status, headers);
  res.end(text);
}

const sendError = (res: ServerResponse, err: AppError) => sendJson(res, err.status, err.toBody(), err.headers);

const tooLarge = () => new AppError(413, 'payload_too_large', `The event body must be at most ${MAX_BODY_BYTES} bytes.`);

/** The whole body, or the reason there is none; `done` is called exactly once. */
function readBody(req: IncomingMessage, done: (err: unknown, body: Buffer | null) => void): void {
  let first: Buffer | null = null;
  let more: Buffer[] | null = null;
  let size = 0;
  let settled = false;
  const settle = (err: unknown, body: Buffer | null) => {
    if (settled) return;
    settled = true;
    done(err, body);
  };
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) {
      req.removeAllListeners('data');
      req.resume();
      settle(tooLarge(), null);
    } else if (first === null) first = c;
    else (more ??= [first]).push(c);
  });
  // Most bodies arrive in one chunk: no concat (a copy) then.
  req.on('end', () => settle(null, more ? Buffer.concat(more) : first ?? Buffer.alloc(0)));
  req.on('error', (err) => settle(err, null));
  // A client that goes away mid-body never sends 'end': settle so nothing waits forever.
  req.on('close', () => (req.complete ? undefined : settle(new AppError(400, 'invalid_request', 'The request body was cut short.'), null)));
}

/** Same verdict as splitting off ';' parameters, trimming and lower-casing, without doing it for the usual values. */
function contentTypeAccepted(header: string | undefined): boolean {
  if (header === undefined || header === 'text/plain' || header === 'application/json') return true;
  return ACCEPTED_TYPES.has(header.split(';')[0].trim().toLowerCase());
}

type Decoder = (body: Buffer, opts: { maxOutputLength: number }) => Buffer;
/**
 * Content-Encodings a server-side client may compress the body with (browsers never do). Decoded
 * bodies are held to MAX_BODY_BYTES like plain ones, so a small bomb is a 413, not a large buffer.
 */
const DECODERS = new Map<string, Decoder>([['gzip', gunzipSync], ['x-gzip', gunzipSync], ['deflate', inflateSync], ['br', brotliDecompressSync]]);
const ENCODINGS = 'gzip, deflate or br';

/** The decoder of a Content-Encoding header: null for none or identity, undefined when unsupported. */
function decoderOf(header: string | undefined): Decoder | null | undefined {
  if (header === undefined) return null;
  const name = header.trim().toLowerCase();
  return name === 'identity' || name === '' ? null : DECODERS.get(name);
}

function decodeBody(req: IncomingMessage, body: Buffer): Buffer | AppError {
  const decode = decoderOf(req.headers['content-encoding']);
  if (!decode) return body;
  try {
    return decode(body, { maxOutputLength: MAX_BODY_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge();
    return new AppError(400, 'invalid_request', `The request body is not valid ${req.headers['content-encoding']!.trim()} data.`);
  }
}

function precheck(req: IncomingMessage): AppError | null {
  if (req.method !== 'POST') return methodNotAllowed(req.method, ['POST', 'OPTIONS']);
  if (!contentTypeAccepted(req.headers['content-type'])) {
    // Named as sent (its media type, without parameters), as a refused Content-Encoding is: curl's
    // default form type is the usual cause, and the answer should say so.
    const sent = (req.headers['content-type'] ?? '').split(';')[0]!.trim().slice(0, 60);
    return new AppError(415, 'unsupported_media_type',
      `Content-Type ${JSON.stringify(sent)} is not accepted: send the event as JSON (Content-Type: application/json or text/plain).`);
  }
  if (decoderOf(req.headers['content-encoding']) === undefined) {
    const sent = req.headers['content-encoding']!.slice(0, 40);
    return new AppError(415, 'unsupported_media_type', `Content-Encoding ${sent} is not supported: send the body uncompressed or as ${ENCODINGS}.`);
  }
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge();
  return null;
}

/**
 * Decodes, checks and drops a leading UTF-8 byte order mark (some server-side clients write one; it
 * is not JSON) in one pass. Invalid bytes are refused: decoding would store U+FFFD in their place,
 * silently changing a path or a prop.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(body: Buffer): unknown | AppError {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    return new AppError(400, 'invalid_request', 'The request body is not valid UTF-8 text.');
  }
  try {
    return JSON.parse(text);
  } catch {
    return new AppError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
}

/** `url` is EVENT_PATH, with or without a query string. */
function isEventPath(url: string | undefined): boolean {
  if (url === undefined || !url.startsWith(EVENT_PATH)) return false;
  return url.length === EVENT_PATH.length || url.charCodeAt(EVENT_PATH.length) === QUERY;
}

type Trust = (addr: string, i: number) => boolean;

/**
 * proxy-addr's compiled trust parses the address (ipaddr.js) on every call; behind a load balancer
 * it is asked about the same few proxy addresses all day. A compiled list's verdict depends on the
 * address only, so it is remembered (bounded: a flood of direct clients only clears the memo).
 */
export function memoizedTrust(trust: Trust, limit = 1000): Trust {
  const verdicts = new Map<string, boolean>();
  return (addr, i) => {
    let v = verdicts.get(addr);
    if (v === undefined) {
      v = trust(addr, i);
      if (verdicts.size >= limit) verdicts.clear();
      verdicts.set(addr, v);
    }
    return v;
  };
}

export function eventHandler(collector: Collector, trustProxy: string[]) {
  const trust = memoizedTrust(proxyaddr.compile(trustProxy));
  const clientIp = (req: IncomingMessage): string =>
    // Without X-Forwarded-For proxy-addr answers the socket's address; skip building its list.
    req.headers['x-forwarded-for'] === undefined ? req.socket.remoteAddress! : proxyaddr(req as Parameters<typeof proxyaddr>[0], trust);

  const fail = (res: ServerResponse, err: unknown) => {
    if (err instanceof AppError) {
      if (err.status < 500) collector.stats.rejected++;
      if (err.status === 413) res.setHeader('connection', 'close');
      return sendError(res, err);
    }
    // Past validation, a failure is ours (storage): the event was not stored, so say "retry".
    logger.error({ err }, 'event could not be stored');
    sendError(res, new AppError(503, 'overloaded', 'The event could not be stored; retry shortly.', undefined, { 'Retry-After': '5' }));
  };

  const collect = (req: IncomingMessage, res: ServerResponse, sent: Buffer, started: number) => {
    const body = decodeBody(req, sent);
    if (body instanceof AppError) return fail(res, body);
    const json = parseJson(body);
    if (json instanceof AppError) return fail(res, json);
    const payload = parsePayload(json);
    if (typeof payload === 'string') return fail(res, new AppError(400, 'invalid_request', payload));
    collector.collect(payload, { ip: clientIp(req), userAgent: req.headers['user-agent'] ?? '', fromBrowser: typeof req.headers.origin === 'string' })
      .then((result: CollectResult) => {
        sendJson(res, 202, result);
        collector.stats.recordAck(performance.now() - started);
      }, (err: unknown) => fail(res, err));
  };

  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!isEventPath(req.url)) return false;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, NO_CONTENT);
      res.end();
      return true;
    }
    const refused = precheck(req);
    if (refused) {
      fail(res, refused);
      return true;
    }
    const started = performance.now();
    readBody(req, (err, body) => {
      if (body === null) return fail(res, err);
      try {
        collect(req, res, body, started);
      } catch (thrown) {
        // A bug past validation must still answer (as the storage failure it amounts to), never hang.
        fail(res, thrown);
      }
    });
    return true;
  };
}
