/**
 * Report latency on seeded traffic (docs/PERFORMANCE.md, "Reports"). Seeds the largest site with
 * `tally seed` (default 9M events over 90 days, so 30 days hold 3M) plus two smaller sites (0.5M
 * each), then times every report for the largest site over 30 and 90 days, in one run, two ways:
 *  - bare: the report's compiled statements run on the engine (runner over the planned query),
 *  - api:  the same report over HTTPS keep-alive (auth, parse, plan, goal rules, envelope).
 *
 *   node scripts/bench.mjs bench/queries/bench.ts [--events N] [--days D] [--small N] [--data DIR] [--runs N] [--only a,b]
 * --data reuses a seeded directory between runs (state in DIR/bench-state.json). The 100M run:
 *   --events 100000000 --days 1000 --small 0   (the same 3M events per 30 days, 33x the history)
 */
import https from 'node:https';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService } from '../../api/runtime';
import '../../cli/admin/seed';
import { loadConfig } from '../../core/config';
import { GoalsRepo } from '../../model/goals';
import { planReport, RUNNERS, type ReportName } from '../../query';
import { executor } from '../../query/execute';
import { DIMENSION_KEYS } from '../../query/registry/dimensions';
import { isoInZone } from '../../query/window/zoned';
import { adminRunner, benchTenant } from '../support';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EVENTS = Number(arg('events', '9000000'));
const SMALL = Number(arg('small', '500000'));
const DAYS = Number(arg('days', '90'));
const RUNS = Number(arg('runs', '15'));
const DATA = arg('data', path.join(os.tmpdir(), `tally-bench-queries-${EVENTS}`));
const ONLY = arg('only', '').split(',').filter(Boolean);

interface State { orgId: string; siteId: string; token: string; seeded: number }

const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
function get(url: string, token: string): Promise<void> {
  return new Promise((resolve, reject) => {
    https.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode} ${body}`))));
    }).on('error', reject);
  });
}

async function timeIt(fn: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 2; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length / 2)], p95: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.95))] };
}

async function setUp(ctx: Awaited<ReturnType<typeof startService>>['ctx']): Promise<State> {
  const file = path.join(DATA, 'bench-state.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as State;
  const run = adminRunner(ctx);
  const { org, site, token } = await benchTenant(run, 'big.example.com');
  const t0 = performance.now();
  const big = await run('seed', { site: site.id, events: String(EVENTS), days: String(DAYS), seed: '1' });
  for (const [i, domain] of (SMALL > 0 ? ['small1.example.com', 'small2.example.com'] : []).entries()) {
    const s = await run('site create', { org: org.id, domain });
    await run('seed', { site: s.id, events: String(SMALL), days: String(DAYS), seed: String(i + 2) });
  }
  console.error(`seeded ${big.inserted} + ${2 * SMALL} events in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  // One bulk INSERT leaves several overlapping parts per partition; a live server's background merges
  // fold them within minutes. Merge now so the numbers are those of the steady state.
  const t1 = performance.now();
  for (const table of ['session_slices', 'page_slices', 'session_totals', 'first_seen']) {
    await ctx.store.command(`OPTIMIZE TABLE ${ctx.store.table(table)} FINAL`);
  }
  console.error(`merged in ${((performance.now() - t1) / 1000).toFixed(0)} s`);
  const goals = new GoalsRepo(ctx.store);
  await goals.create({ site_id: site.id, name: 'Signup', kind: 'event', event_name: 'Signup' });
  await goals.create({ site_id: site.id, name: 'Purchase', kind: 'event', event_name: 'Purchase', revenue_signal: true });
  await goals.create({ site_id: site.id, name: 'Pricing page', kind: 'page', path_pattern: '/pricing' });
  const state: State = { orgId: org.id, siteId: site.id, token, seeded: big.inserted };
  writeFileSync(file, JSON.stringify(state));
  return state;
}

interface Case { name: string; report: ReportName; path: string; params: Record<string, string> }

function cases(): Case[] {
  const now = Date.now();
  const startOfToday = Math.floor(now / 86_400_000) * 86_400_000;
  const windows: [string, Record<string, string>][] = [
    ['30d', { period: 'last30d' }],
    ['90d', { from: isoInZone(startOfToday - 89 * 86_400_000, 'UTC'), to: isoInZone(startOfToday + 86_400_000, 'UTC') }],
  ];
  const out: Case[] = [];
  for (const [w, p] of windows) {
    out.push({ name: `overview ${w}`, report: 'overview', path: '/overview', params: p });
    out.push({ name: `timeseries ${w}`, report: 'timeseries', path: '/timeseries', params: p });
    for (const d of DIMENSION_KEYS) out.push({ name: `breakdown ${d} ${w}`, report: 'breakdown', path: `/breakdowns/${d}`, params: { ...p, dimension: d } });
    out.push({ name: `heatmap ${w}`, report: 'heatmap', path: '/heatmap', params: p });
    out.push({ name: `engagement ${w}`, report: 'engagement', path: '/engagement', params: p });
  }
  out.push({ name: 'realtime 10m', report: 'realtime', path: '/realtime', params: {} });
  out.push({ name: 'realtime countries 30m', report: 'realtime_countries', path: '/realtime/countries', params: {} });
  return out.filter((c) => ONLY.length === 0 || ONLY.some((o) => c.name.startsWith(o)));
}

async function main() {
  mkdirSync(DATA, { recursive: true });
  const config = loadConfig({ TALLY_DATA_DIR: DATA, TALLY_HTTPS_PORT: '0', TALLY_HTTP_PORT: '0', TALLY_HOST: '127.0.0.1', TALLY_RATE_LIMIT_PER_MINUTE: '100000000' });
  const running = await startService(config, { redisPrefix: `tally-bench-queries-${process.pid}` });
  const ctx = running.ctx;
  try {
    const state = await setUp(ctx);
    const site = (await ctx.repos.getSite(state.siteId))!;
    const org = (await ctx.repos.getOrg(state.orgId))!;
    const [{ n30 }] = await ctx.store.query<{ n30: number }>(
      `SELECT count() AS n30 FROM ${ctx.store.table('events')} WHERE site_id = {s:UUID} AND ts >= now() - INTERVAL 30 DAY`, { s: site.id });
    console.log(`site ${site.id}: ${state.seeded} events, ${n30} in the last 30 days; ${RUNS} runs per case; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log('| report | window | bare p50 | bare p95 | API p50 | API p95 | API − bare (p50) |');
    console.log('|---|---|---|---|---|---|---|');
    const exec = executor(ctx.store);
    for (const c of cases()) {
      const planned = await planReport(ctx.store, site, org.retention_days, c.report, c.params);
      const bare = await timeIt(() => RUNNERS[c.report](planned, exec));
      const qs = new URLSearchParams(Object.entries(c.params).filter(([k]) => k !== 'dimension')).toString();
      const url = `https://127.0.0.1:${running.httpsPort}/api/v1/sites/${site.id}${c.path}${qs ? '?' + qs : ''}`;
      const api = await timeIt(() => get(url, state.token));
      const [name, ...rest] = c.name.split(' ');
      const window = rest.pop();
      console.log(`| ${[name, ...rest].join(' ')} | ${window} | ${bare.p50.toFixed(1)} ms | ${bare.p95.toFixed(1)} ms | ${api.p50.toFixed(1)} ms | ${api.p95.toFixed(1)} ms | ${(api.p50 - bare.p50).toFixed(1)} ms |`);
    }
  } finally {
    agent.destroy();
    await running.stop();
  }
}

// Exit explicitly: queue and Redis handles must not keep a finished benchmark alive.
main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
