import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { killChild } from './processes';

/**
 * Runs test/support/clickhouse-http.ts (ClickHouse's HTTP interface over the real engine) as a child
 * process, the way a test starts a ClickHouse server: bundled once per test process with esbuild
 * (as scripts/build.mjs bundles the service), then `node bundle --data DIR --port N`.
 */
export interface ClickHouseHttpChild {
  port: number;
  url: string;
  child: ChildProcess;
  /** SIGKILL: an outage, not a shutdown (the data directory stays and a restart recovers it). */
  kill(): Promise<void>;
}

let bundle: string | null = null;

function bundled(): string {
  if (bundle) return bundle;
  // Under the repository's dist/ (not the temp dir): the bundle resolves chdb from node_modules.
  const dir = path.join(__dirname, '..', '..', 'dist', 'test-support');
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `clickhouse-http-${process.pid}.js`);
  buildSync({
    entryPoints: [path.join(__dirname, 'clickhouse-http.ts')], outfile: out, bundle: true, platform: 'node', target: 'node20',
    packages: 'external', logLevel: 'warning', absWorkingDir: path.join(__dirname, '..', '..'),
  });
  return (bundle = out);
}

export function startClickHouseHttpChild(opts: { dataDir: string; port?: number; user?: string; password?: string; lanes?: number }): Promise<ClickHouseHttpChild> {
  const args = [bundled(), '--data', opts.dataDir, '--port', String(opts.port ?? 0)];
  if (opts.user !== undefined) args.push('--user', opts.user);
  if (opts.password !== undefined) args.push('--password', opts.password);
  if (opts.lanes !== undefined) args.push('--lanes', String(opts.lanes));
  // Resolved from the repository, where node_modules (chdb) is.
  const child = spawn(process.execPath, args, { cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`clickhouse-http exited early (${code}): ${stderr}`)));
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const port = /listening (\d+)/.exec(out)?.[1];
      if (port) resolve({ port: Number(port), url: `http://127.0.0.1:${port}`, child, kill: () => killChild(child) });
    });
  });
}
