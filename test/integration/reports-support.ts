import { setClock } from '../../core/clock';
import { isoToCh } from '../../clickhouse/meta';
import { visitorIdFor } from '../../ingest/hash';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import type { HttpResult } from '../support/http';
import type { Scope } from '../../core/domain';
import { planReport, RUNNERS } from '../../query';
import type { ReportName, ReportQuery } from '../../query/ast';
import { executor } from '../../query/execute';
import type { ReportResult } from '../../query/reports/shared';

/**
 * Report suites: a real service (chDB, Redis, HTTPS) per suite, fixtures loaded through the real
 * `events import` admin command, a frozen clock, and a GET helper for report endpoints.
 */
export const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
export const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0';
export const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
export const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

export interface Line {
  ts: string;
  name?: string;
  path?: string;
  host?: string;
  visitor?: string;
  session?: string;
  referrer?: string;
  user_agent?: string;
  ip?: string;
  country?: string;
  region?: string;
  city?: string;
  link?: string;
  value_cents?: number;
  query?: string;
}

export interface ReportSuite {
  svc: TestService;
  t: Tenant;
  importLines(lines: Line[], siteId?: string): Promise<void>;
  get(path: string, params?: Record<string, string>, token?: string): Promise<HttpResult>;
  /** GET that must answer 200; returns the body. */
  ok(path: string, params?: Record<string, string>): Promise<{ data: any; meta: any }>;
  visitorId(visitor: string): string;
  /** `visitor` null: a checkout that carried no visitor id. */
  payment(p: { id: string; visitor: string | null; paid_at: string; amount: number; refunded?: number; status?: string; currency?: string }): Promise<void>;
  /** Plan a report once, then run it on the source the planner chose and on raw events. */
  bothSources(report: ReportName, params: Record<string, string>): Promise<{ planned: ReportQuery; rollup: ReportResult; raw: ReportResult }>;
  stop(): Promise<void>;
}

export function toNdjson(domain: string, lines: Line[]): string {
  return lines
    .map((l) => {
      const url = `https://${l.host ?? domain}${l.path ?? '/'}${l.query ? '?' + l.query : ''}`;
      const { path: _p, host: _h, query: _q, ...rest } = l;
      return JSON.stringify({ name: 'pageview', user_agent: CHROME, ...rest, url });
    })
    .join('\n');
}

export async function reportSuite(opts: { now: string; scopes?: Scope[]; domain?: string; retentionDays?: number } = { now: '2026-05-20T12:00:00Z' }): Promise<ReportSuite> {
  setClock(opts.now);
  const svc = await startTestService();
  const t = await svc.tenant({ scopes: opts.scopes ?? ['analytics:read', 'goals:write'], domain: opts.domain });
  if (opts.retentionDays) {
    const org = (await svc.running.ctx.repos.getOrg(t.orgId))!;
    await svc.running.ctx.repos.orgs.put({ ...org, retention_days: opts.retentionDays });
  }
  const store = svc.running.ctx.store;
  const suite: ReportSuite = {
    svc,
    t,
    async importLines(lines, siteId = t.siteId) {
      const out = await svc.admin<{ imported: number; rejected: number; errors: unknown[] }>('events import', { site: siteId }, toNdjson(t.domain, lines));
      if (out.rejected) throw new Error('fixture lines rejected: ' + JSON.stringify(out.errors));
    },
    get(path, params = {}, token = t.token) {
      const qs = new URLSearchParams(params).toString();
      return svc.api('GET', `/sites/${t.siteId}${path}${qs ? '?' + qs : ''}`, { token });
    },
    async ok(path, params = {}) {
      const res = await suite.get(path, params);
      if (res.status !== 200) throw new Error(`${path} ${JSON.stringify(params)} → ${res.status} ${res.text}`);
      return res.body;
    },
    visitorId: (v) => visitorIdFor(t.siteId, v),
    async payment(p) {
      await store.insert('payments', [{
        site_id: t.siteId, provider: 'stripe', payment_id: p.id, visitor_id: p.visitor === null ? '0' : visitorIdFor(t.siteId, p.visitor), session_id: '0',
        amount_cents: p.amount, refunded_cents: p.refunded ?? 0, currency: p.currency ?? 'USD', status: p.status ?? 'succeeded',
        paid_at: isoToCh(p.paid_at), version: 1, is_deleted: 0,
      }]);
    },
    async bothSources(report, params) {
      setClock(opts.now);
      const site = (await svc.running.ctx.repos.getSite(t.siteId))!;
      const planned = await planReport(store, site, 1095, report, params);
      const run = (source: ReportQuery['source']) => RUNNERS[report]({ ...planned, source }, executor(store));
      const raw = await run('events');
      return { planned, rollup: planned.source === 'events' ? raw : await run(planned.source), raw };
    },
    async stop() {
      setClock(null);
      await svc.stop();
    },
  };
  return suite;
}
