import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { AppError, type ErrorCode } from '../core/errors';

/**
 * Requests Node's HTTP parser refuses before any handler runs (a request line and headers over its
 * 16 KB limit, bytes that are not HTTP/1.1, a request that took too long to arrive) are answered in
 * the API's error shape: Node's own answers have an empty body, no code and no message (a long
 * `terms` list on /search/term-pages met a bare 431). Statuses are Node's own.
 */
const REFUSALS: Record<string, [status: number, reason: string, code: ErrorCode, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large',
    'The request line and headers are over 16 KB; send fewer or shorter query parameters or headers (split a long terms list across requests).'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large', 'payload_too_large', 'The chunk extensions of the body are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request did not arrive in time.'],
};
const MALFORMED: [number, string, ErrorCode, string] = [400, 'Bad Request', 'invalid_request', 'The request is not valid HTTP/1.1.'];

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // As Node's own handler: nothing is written into an answer already under way on this connection
    // (a pipelined request refused while the one before it is still being answered).
    const inflight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inflight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, code, message] = REFUSALS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify(new AppError(status, code, message).toBody());
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
