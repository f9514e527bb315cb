import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

/**
 * Helpers for tests and benches that run the built server (or a Redis) as a child process: a free
 * port, waiting for /healthz, and a call on the server's admin socket.
 */

/** A port nobody listens on right now (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once plain-HTTP /healthz on `port` answers 200; rejects after `timeoutMs`. */
export async function waitHealthy(port: number, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((resolve) => {
      http.get(`http://127.0.0.1:${port}/healthz`, (res) => { res.resume(); resolve(res.statusCode === 200); }).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not answer /healthz on port ${port} within ${timeoutMs} ms`);
}

/** One admin command (`org create`, `events stats`...) on the admin socket in `dataDir`; its JSON answer. */
export function adminCall<T = Record<string, unknown>>(dataDir: string, command: string, args: Record<string, string> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: path.join(dataDir, 'admin.sock'), method: 'POST', path: `/${command.replace(' ', '/')}?${new URLSearchParams(args)}` },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text) as T) : reject(new Error(text))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A throwaway redis-server on `port` (no persistence), resolved once it accepts connections; rejected if it exits first (a taken port). */
export function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'pipe' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited early (${code})`)));
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('Ready to accept connections') && resolve(child));
  });
}

/** SIGKILLs a child process (an outage, not a shutdown) and resolves once it is gone. */
export const killChild = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve();
  child.once('exit', () => resolve());
  child.kill('SIGKILL');
});

export const stopRedis = killChild;
