import { once } from 'node:events';
import net from 'node:net';
import { settlesWithin } from '../../core/deadline';
import { startTestService, type TestService } from '../support/harness';
import { waitFor } from '../support/wait';

/**
 * The admin socket on shutdown, for a request that comes after it began on a connection accepted just
 * before (a CLI that connected at that moment): Node counts a new connection as busy, so closing the
 * idle ones spares it, and the cut of commands still receiving their body has already passed. Such a
 * request runs nothing. Before, an import from stdin arriving so kept the server waiting for the
 * 20 s limit (exit 1): the CLI test's SIGTERM, sent once the import's connection was accepted, met it.
 */

/** A connection the admin server has accepted, and the service's shutdown begun after it. */
async function connectedThenStopping(s: TestService): Promise<{ socket: net.Socket; stopped: Promise<void> }> {
  const socket = net.connect(s.config.adminSocket);
  await once(socket, 'connect');
  // Accepted: the server is this process, and its poll phase accepts before a timer can fire.
  await new Promise((r) => setTimeout(r, 50));
  const stopped = s.stop();
  // The admin server has stopped accepting: its shutdown has begun (its signal is aborted).
  await waitFor('the admin socket to refuse new connections', () => new Promise<boolean>((resolve) => {
    const probe = net.connect(s.config.adminSocket);
    probe.once('connect', () => { probe.destroy(); resolve(false); });
    probe.once('error', () => resolve(true));
  }));
  return { socket, stopped };
}

test('an import sent after shutdown began is cut at once, and the shutdown does not wait for it', async () => {
  const s = await startTestService();
  const t = await s.tenant();
  const { socket, stopped } = await connectedThenStopping(s);
  const closed = once(socket, 'close');
  socket.on('error', () => undefined); // ECONNRESET: the cut
  const line = JSON.stringify({ ts: new Date().toISOString(), name: 'pageview', url: `https://${t.domain}/late` });
  // The file is still arriving: chunked, no last chunk.
  socket.write(`POST /events/import?site=${t.siteId} HTTP/1.1\r\nHost: admin\r\nTransfer-Encoding: chunked\r\n\r\n${(line.length + 1).toString(16)}\r\n${line}\n\r\n`);
  try {
    expect(await settlesWithin(stopped, 10_000)).toBe(true);
    expect(await settlesWithin(closed, 1000)).toBe(true);
  } finally {
    socket.destroy(); // lets a shutdown that waited for it end
    await stopped;
  }
});

test('any other command sent after shutdown began runs nothing: 503 shutting_down', async () => {
  const s = await startTestService();
  const { socket, stopped } = await connectedThenStopping(s);
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  socket.write('POST /org/create?name=Late HTTP/1.1\r\nHost: admin\r\nContent-Length: 0\r\n\r\n');
  try {
    expect(await settlesWithin(once(socket, 'close'), 10_000)).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    const body = text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1); // unframed (chunked)
    expect(JSON.parse(body)).toEqual({
      error: { code: 'shutting_down', message: 'the server is shutting down: it runs no new admin command' },
    });
  } finally {
    socket.destroy();
    await stopped;
  }
});
