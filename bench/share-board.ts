/**
 * The resource pages' cost on seeded traffic: the funnel report (windowFunnel over a month of
 * events), the share board's data feed with every section on (computed, and served from its memo),
 * and the widget feed. Sequential requests over HTTPS keep-alive, after warm-up.
 *
 *   node scripts/bench.mjs bench/share-board.ts [events=200000] [requests=30]
 */
// First: the route modules this bench reaches through public/share-data call .openapi() as they load,
// and from this entry the import cycle through the model reached them before api/openapi extended zod.
import '../api/openapi';
import https from 'node:https';
import { ShareRepo, panelsOf } from '../model/share';
import { resolveWindow } from '../model/notes-window';
import { runReport } from '../query';
import { boardData } from '../public/share-data';
import { adminRunner, benchService, benchTenant } from './support';

const events = Number(process.argv[2] ?? 200_000);
const n = Number(process.argv[3] ?? 30);
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });

function get(url: string, token?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    https.get(url, { agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: status ${res.statusCode}`))));
    }).on('error', reject);
  });
}

async function timeIt(fn: () => Promise<unknown>, warm = 3): Promise<string> {
  for (let i = 0; i < warm; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(1);
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`;
}

async function main() {
  const running = await benchService();
  const ctx = running.ctx;
  const run = adminRunner(ctx);
  const { site: siteRow, token } = await benchTenant(run, 'bench.example.com', 'funnels:write,settings:write,analytics:read');
  const seeded = await run('seed', { site: siteRow.id, events: String(events), days: '30', seed: '7' });
  const base = `https://127.0.0.1:${running.httpsPort}`;
  const api = (method: string, p: string, body: unknown) => new Promise<any>((resolve, reject) => {
    const req = https.request(`${base}/api/v1${p}`, { method, agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  const funnel = (await api('POST', `/sites/${siteRow.id}/funnels`, {
    name: 'Signup', steps: [{ kind: 'view', value: '/' }, { kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }], window_seconds: 86400,
  })).data;
  const board = (await api('PUT', `/sites/${siteRow.id}/share`, { revenue: true })).data;
  await api('PUT', `/sites/${siteRow.id}/widget`, { enabled: true, type: 'analytics', metric: 'visitors' });
  const widgetSlug = (await api('PUT', `/sites/${siteRow.id}/widget`, {})).data.slug;

  const site = (await ctx.repos.getSite(siteRow.id))!;
  const row = (await new ShareRepo(ctx.store).get(site.id))!;
  const live = { row, site, retentionDays: 1095 };
  const window = resolveWindow({ period: 'last30d', tz: 'UTC' }, 'last30d', 1095);

  console.log(`events seeded: ${seeded.inserted}, requests per case: ${n}, node ${process.version}`);
  console.log(`funnel report, 3 steps, last30d   ${await timeIt(() => get(`${base}/api/v1/sites/${site.id}/funnels/${funnel.id}/report?period=last30d`, token))}`);
  console.log(`board data, 12 sections, computed ${await timeIt(() => boardData(ctx, live, panelsOf(row), window, runReport))}`);
  console.log(`board data feed, memo warm (HTTP) ${await timeIt(() => get(`${base}/share/${board.slug}/data?period=last30d`))}`);
  console.log(`overview report alone (HTTP)      ${await timeIt(() => get(`${base}/api/v1/sites/${site.id}/overview?period=last30d`, token))}`);
  console.log(`widget feed (HTTP, memo warm)     ${await timeIt(() => get(`${base}/widget/${widgetSlug}.json`))}`);
  agent.destroy();
  await running.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
