import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../clickhouse/store';
import { startAdminServer } from '../../cli/admin/server';
import { Repos } from '../../model/repos';
import { startTestService, type TestService } from '../support/harness';

/**
 * Server mode, ClickHouse unreachable: an admin command (the CLI's path) meets the answer the API
 * gives, 503 storage_unavailable, not 500 internal with the client's transport message. The service's
 * own context with its store pointed at a port nothing listens on.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

function post(socketPath: string, command: string): Promise<{ status?: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'POST', path: command }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a command whose storage does not answer is 503 storage_unavailable', async () => {
  const unreachable = openStore({ database: 'tally', url: 'http://127.0.0.1:1' });
  const socketPath = path.join(mkdtempSync(path.join(os.tmpdir(), 'tally-admin-')), 'admin.sock');
  const stop = await startAdminServer({ ...svc.running.ctx, store: unreachable, repos: new Repos(unreachable) }, socketPath);
  try {
    expect(await post(socketPath, '/org/create?name=Acme')).toEqual({
      status: 503, body: { error: { code: 'storage_unavailable', message: 'Storage is unreachable; try again shortly.' } },
    });
  } finally {
    await stop();
    await unreachable.close();
  }
});
