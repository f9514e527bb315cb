import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitHealthy } from '../support/processes';
import { waitFor } from '../support/wait';

/**
 * `npm start` as the README gives it, stopped as a service manager stops it: SIGTERM to npm. The
 * script's `sh -c` used to die without passing the signal on, so the server kept the ports and the
 * data directory and never flushed ingest. With `exec` the signal reaches node, which shuts down.
 */
const root = path.join(__dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-npm-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const answers = (port: number) => new Promise<boolean>((resolve) => {
  http.get(`http://127.0.0.1:${port}/healthz`, (res) => resolve(res.statusCode === 200)).on('error', () => resolve(false));
});

test('SIGTERM to npm start stops the server: the port is freed and npm exits 0', async () => {
  const httpPort = await freePort();
  const env = {
    ...process.env, NODE_ENV: 'production', TALLY_DATA_DIR: dataDir, TALLY_HOST: '127.0.0.1', TALLY_HTTP_PORT: String(httpPort),
    TALLY_HTTPS_PORT: String(await freePort()), CLICKHOUSE_DATABASE: 'npmstart', TALLY_LOG_LEVEL: 'warn', TALLY_REDIS_PREFIX: `npmstart${process.pid}`,
  };
  delete (env as Record<string, string | undefined>).TALLY_ADMIN_SOCKET;
  const npm = spawn('npm', ['start', '--silent'], { cwd: root, env, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  await waitHealthy(httpPort, 90_000);
  npm.kill('SIGTERM');
  expect(await exited).toBe(0);
  await waitFor('the port to be freed', async () => !(await answers(httpPort)), 30_000);
}, 150_000);
