import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../api/context';
import { startService, type Running } from '../api/runtime';
import { runCommand } from '../cli/admin/commands';
import '../cli/admin/seed';
import { loadConfig } from '../core/config';

/** What in-process benches share: the service, the admin commands, and one tenant with a key. */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AdminRun = (cmd: string, args: Record<string, string>) => Promise<any>;

/** The admin commands of the CLI, run in-process against `ctx` (same validation as the socket). */
export function adminRunner(ctx: AppContext): AdminRun {
  return (cmd, args) => runCommand(ctx, cmd, args);
}

/** The whole service in this process on a fresh data directory, ports chosen by the kernel, no rate limit. */
export function benchService(): Promise<Running> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-bench-'));
  const config = loadConfig({ TALLY_DATA_DIR: dataDir, TALLY_HTTPS_PORT: '0', TALLY_HTTP_PORT: '0', TALLY_HOST: '127.0.0.1', TALLY_RATE_LIMIT_PER_MINUTE: '1000000' });
  return startService(config, { redisPrefix: `tally-bench-${randomBytes(4).toString('hex')}` });
}

/** An organisation with an owner, one site of `domain` and the owner's key (default scopes unless given). */
export async function benchTenant(run: AdminRun, domain: string, scopes?: string) {
  const org = await run('org create', { name: 'Bench' });
  const user = await run('user create', { org: org.id, email: 'bench@example.com', role: 'owner' });
  const site = await run('site create', { org: org.id, domain });
  const { token } = await run('key create', { org: org.id, user: user.id, ...(scopes ? { scopes } : {}) });
  return { org, user, site, token: token as string };
}
