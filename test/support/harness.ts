import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startService, type Running } from '../../api/runtime';
import { runCommand } from '../../cli/admin/commands';
import { loadConfig, type Config } from '../../core/config';
import type { Scope } from '../../core/domain';
import { request, type HttpResult, type RequestOptions } from './http';
import { processDataDir } from './engine';

/**
 * One real Tally per test suite: chDB in this worker process (one engine per process, so each suite
 * gets its own database), real Redis under a unique key prefix, real HTTPS on an ephemeral port.
 */
export interface TestService {
  running: Running;
  config: Config;
  /** https://127.0.0.1:<port> */
  base: string;
  /** http://127.0.0.1:<port> (plain) */
  plainBase: string;
  api(method: string, apiPath: string, opts?: RequestOptions): Promise<HttpResult>;
  /** Run an admin command in-process, exactly as the socket would. `body` feeds streaming commands. */
  admin<T = any>(command: string, args: Record<string, string | undefined>, body?: string | Buffer): Promise<T>;
  /** An organisation with an owner, one site and a key with the given scopes. */
  tenant(opts?: { scopes?: Scope[]; domain?: string; sites?: number; timezone?: string }): Promise<Tenant>;
  stop(): Promise<void>;
}

export interface Tenant {
  orgId: string;
  userId: string;
  siteId: string;
  siteIds: string[];
  domain: string;
  token: string;
  key(opts?: { scopes?: Scope[]; sites?: string[]; expiresAt?: string; userId?: string }): Promise<{ id: string; token: string }>;
}


export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const suite = randomBytes(5).toString('hex');
  mkdirSync(processDataDir, { recursive: true });
  const config = loadConfig({
    TALLY_DATA_DIR: processDataDir,
    TALLY_HTTPS_PORT: '0',
    TALLY_HTTP_PORT: '0',
    TALLY_HOST: '127.0.0.1',
    TALLY_ADMIN_SOCKET: path.join(processDataDir, `admin-${suite}.sock`),
    CLICKHOUSE_DATABASE: `t_${suite}`,
    ...env,
  });
  const running = await startService(config, { redisPrefix: `tally-test-${suite}` });
  // Suites start on their own fresh database: nothing to catch up, but /readyz should say so at once.
  await running.rollupsCaughtUp;
  const base = `https://127.0.0.1:${running.httpsPort}`;
  const plainBase = `http://127.0.0.1:${running.httpPort}`;
  const ctx = running.ctx;
  let domainSeq = 0;

  const admin = async <T>(command: string, args: Record<string, string | undefined>, body?: string | Buffer): Promise<T> =>
    (await runCommand(ctx, command, args, body)) as T;

  const tenant: TestService['tenant'] = async (opts = {}) => {
    const org = await admin<{ id: string }>('org create', { name: 'Org ' + suite });
    const user = await admin<{ id: string }>('user create', { org: org.id, email: `owner-${suite}@example.com`, role: 'owner' });
    const siteIds: string[] = [];
    let domain = '';
    for (let i = 0; i < (opts.sites ?? 1); i++) {
      const d = i === 0 && opts.domain ? opts.domain : `site${++domainSeq}-${suite}.example.com`;
      const s = await admin<{ id: string }>('site create', { org: org.id, domain: d, timezone: opts.timezone });
      if (i === 0) domain = d;
      siteIds.push(s.id);
    }
    const key: Tenant['key'] = async (k = {}) =>
      admin('key create', {
        org: org.id, user: k.userId ?? user.id, scopes: (k.scopes ?? opts.scopes ?? ['analytics:read']).join(','),
        sites: k.sites?.join(','), 'expires-at': k.expiresAt,
      });
    const { token } = await key();
    return { orgId: org.id, userId: user.id, siteId: siteIds[0], siteIds, domain, token, key };
  };

  return {
    running,
    config,
    base,
    plainBase,
    api: (method, apiPath, opts) => request(method, `${base}/api/v1${apiPath}`, opts),
    admin,
    tenant,
    async stop() {
      await running.stop();
    },
  };
}
