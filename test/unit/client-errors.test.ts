import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { answerClientErrors } from '../../api/client-errors';

/** The parser's refusals on a real node:http server, as the API's servers are set up (api/runtime listen). */
async function serve(opts: http.ServerOptions, handler: http.RequestListener): Promise<{ server: http.Server; port: number; close: () => Promise<void> }> {
  const server = http.createServer(opts, handler);
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Everything the server writes on one connection until it closes it. */
function exchange(port: number, send: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => send(socket));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (text += c));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

test('a request that does not arrive in time is 408 request_timeout in the error shape', async () => {
  const s = await serve({ headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 } as http.ServerOptions, (_req, res) => res.end('ok'));
  try {
    const text = await exchange(s.port, (socket) => socket.write('GET / HTTP/1.1\r\nHost: x\r\n')); // headers never finished
    expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(text.split('\r\n\r\n')[1])).toEqual({ error: { code: 'request_timeout', message: 'The request did not arrive in time.' } });
  } finally {
    await s.close();
  }
});

test('a pipelined request refused while the one before it is being answered gets nothing written into that answer', async () => {
  // The first answer is finished only once the second request has been refused (10 s at most): a
  // fixed 200 ms raced the 20 KB request's arrival on a loaded machine, and a refusal after the answer
  // had ended rightly wrote a 431.
  let refused!: () => void;
  const refusal = new Promise<void>((resolve) => (refused = resolve));
  const s = await serve({}, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first half ');
    void Promise.race([refusal, new Promise((r) => setTimeout(r, 10_000))]).then(() => res.end('second half'));
  });
  s.server.on('clientError', () => refused()); // after answerClientErrors' own listener
  try {
    const huge = `GET /b HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    // The second request goes once the first answer's head has arrived: it is under way when the second is refused.
    const text = await exchange(s.port, (socket) => {
      socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.once('data', () => socket.write(huge));
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).not.toContain('431');
    expect(text).not.toContain('headers_too_large');
  } finally {
    await s.close();
  }
});

test('chunk extensions over the parser\'s limit are 413 payload_too_large, as Node answers them', async () => {
  const s = await serve({}, (req, res) => { req.resume(); req.on('end', () => res.end('ok')); });
  try {
    const text = await exchange(s.port, (socket) => socket.write(
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=${'a'.repeat(20_000)}\r\nhello\r\n0\r\n\r\n`));
    expect(text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(JSON.parse(text.split('\r\n\r\n')[1]).error.code).toBe('payload_too_large');
  } finally {
    await s.close();
  }
});
