/**
 * What authentication adds to a report request. A bench-only route runs ONE report-sized SQL query;
 * we time that query called directly (bare SQL) and the same query through the whole API path (HTTPS
 * keep-alive, request id, auth, rate limit, scope, site reach, zod, envelope), with the auth cache on
 * and off. Budget (issue 2): at most 5 ms over bare SQL.
 *
 *   node scripts/bench.mjs bench/auth.ts [requests=400]
 */
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { API_ROUTES } from '../api/modules';
import type { RouteRegistrar } from '../api/route';
import { startService } from '../api/runtime';
import { COMMANDS } from '../cli/admin/commands';
import { loadConfig } from '../core/config';

const REPORT_SQL = (table: string) =>
  `SELECT count() AS views, uniq(visitor_id) AS visitors FROM ${table} WHERE site_id = {s:UUID} AND ts >= now() - INTERVAL 30 DAY`;

API_ROUTES.push((r: RouteRegistrar) =>
  r.route({
    method: 'get', path: '/sites/{siteId}/bench-report', summary: 'bench only', scope: 'analytics:read', query: z.object({}),
    async handler({ app, site }) {
      return { data: await app.store.query(REPORT_SQL(app.store.table('events')), { s: site.id }) };
    },
  }),
);

const n = Number(process.argv[2] ?? 400);
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });

function get(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`status ${res.statusCode}`))));
    }).on('error', reject);
  });
}

async function timeIt(fn: () => Promise<unknown>): Promise<{ p50: number; p95: number; mean: number }> {
  for (let i = 0; i < 50; i++) await fn(); // warm up
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
  return { p50: at(0.5), p95: at(0.95), mean: ms.reduce((a, b) => a + b, 0) / ms.length };
}

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-bench-'));
  const config = loadConfig({ TALLY_DATA_DIR: dataDir, TALLY_HTTPS_PORT: '0', TALLY_HTTP_PORT: '0', TALLY_HOST: '127.0.0.1', TALLY_RATE_LIMIT_PER_MINUTE: '1000000' });
  const running = await startService(config, { redisPrefix: `tally-bench-${randomBytes(4).toString('hex')}` });
  const ctx = running.ctx;
  const run = (cmd: string, args: Record<string, string>) => COMMANDS[cmd].run(ctx, COMMANDS[cmd].args.parse(args), undefined as never) as Promise<any>;
  const org = await run('org create', { name: 'Bench' });
  const user = await run('user create', { org: org.id, email: 'bench@example.com', role: 'owner' });
  const site = await run('site create', { org: org.id, domain: 'bench.example.com' });
  const { token } = await run('key create', { org: org.id, user: user.id });
  await ctx.store.command(
    `INSERT INTO ${ctx.store.table('events')} (site_id, ts, name, visitor_id, session_id, session_start)
     SELECT {s:UUID}, now() - toIntervalSecond(number % 2000000), 'pageview', number % 5000, number % 20000, now() FROM numbers(200000)`,
    { s: site.id },
  );
  const url = `https://127.0.0.1:${running.httpsPort}/api/v1/sites/${site.id}/bench-report`;

  const bare = await timeIt(() => ctx.store.query(REPORT_SQL(ctx.store.table('events')), { s: site.id }));
  const cached = await timeIt(() => get(url, token));
  const cache = ctx.repos.authCache;
  ctx.repos.authCache = undefined;
  const uncached = await timeIt(() => get(url, token));
  ctx.repos.authCache = cache;

  const fmt = (x: { p50: number; p95: number; mean: number }) => `p50 ${x.p50.toFixed(2)} ms, p95 ${x.p95.toFixed(2)} ms, mean ${x.mean.toFixed(2)} ms`;
  console.log(`requests per case: ${n}, events: 200000, node ${process.version}`);
  console.log(`bare SQL                    ${fmt(bare)}`);
  console.log(`API, auth cache on          ${fmt(cached)}   overhead p50 ${(cached.p50 - bare.p50).toFixed(2)} ms`);
  console.log(`API, auth cache off         ${fmt(uncached)}   overhead p50 ${(uncached.p50 - bare.p50).toFixed(2)} ms`);
  agent.destroy();
  await running.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
