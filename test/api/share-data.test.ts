import { setClock } from '../../core/clock';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request } from '../support/http';
import { boardFixture } from './share-fixture';
import { boardWindow, liveBoard } from '../../public/share';
import { boardData, type RunReport } from '../../public/share-data';
import { panelsOf } from '../../model/share';
import { runReport } from '../../query';

/**
 * What the public board feed and the widget feed carry: only enabled sections, no money unless
 * published, and the same figures the API gives for the same window.
 */
let svc: TestService;
let t: Tenant;
const NOW = '2026-03-10T15:00:00Z';

beforeAll(async () => {
  setClock(NOW);
  svc = await startTestService();
  t = await svc.tenant({ scopes: ['settings:write', 'analytics:read', 'funnels:write', 'goals:write'] });
  await boardFixture(svc, t);
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

const feed = (slug: string, qs = '') => request('GET', `${svc.base}/share/${slug}/data${qs}`);
const api = async (path: string) => {
  const res = await svc.api('GET', `/sites/${t.siteId}${path}`, { token: t.token });
  expect(res.status).toBe(200);
  return res.body.data;
};

test('only enabled sections are sent; with revenue off no money field appears anywhere', async () => {
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { geo: false, heatmap: false, keywords: false } })).body.data;
  const res = await feed(board.slug, '?period=last7d');
  expect(res.status).toBe(200);
  const d = res.body.data;
  expect(d.panels).toEqual(['tech', 'goals', 'pages', 'funnel', 'sources', 'ai_panel', 'channel_quality', 'imported_history']);
  expect(Object.keys(d.sections).sort()).toEqual([...d.panels].sort());
  expect(res.text).not.toMatch(/revenue_cents|revenue_per_visitor_cents|"payments"|goal_value_cents/);
  expect(d.sections).not.toHaveProperty('geo');
});

test('with goals off, goal completions and conversion rates are sent nowhere but in channel quality', async () => {
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { goals: false, geo: true, revenue: true } })).body.data;
  const d = (await feed(board.slug, '?period=last7d')).body.data;
  expect(d.panels).not.toContain('goals');
  const { channel_quality: quality, ...others } = d.sections;
  expect(JSON.stringify({ summary: d.summary, others })).not.toMatch(/"goals"|"conversion_rate"/);
  expect(d.summary).toMatchObject({ visitors: expect.any(Number), views: expect.any(Number), revenue_cents: 4200 });
  expect(others.geo.countries[0]).toEqual({ label: expect.any(String), visitors: expect.any(Number), views: expect.any(Number), revenue_cents: expect.any(Number) });
  expect(quality.channels[0]).toHaveProperty('conversion_rate');
  // Switched back on, the same figures come back.
  await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { goals: true } });
  const on = (await feed(board.slug, '?period=last7d')).body.data;
  expect(on.summary.goals).toBeGreaterThan(0);
  expect(on.sections.geo.countries[0]).toHaveProperty('goals');
});

test('figures match the API for the same window', async () => {
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { geo: true, heatmap: true, keywords: true, revenue: true } })).body.data;
  const d = (await feed(board.slug, '?period=last7d')).body.data;
  const window = '?period=last7d&tz=UTC';
  const overview = await api(`/overview${window}`);
  expect(d.summary).toEqual(overview);
  expect(overview.visitors).toBeGreaterThan(0);
  expect(overview.revenue_cents).toBe(4200);
  expect(d.timeseries.map((r: { visitors: number }) => r.visitors)).toEqual((await api(`/timeseries${window}`)).map((r: { visitors: number }) => r.visitors));
  const countries = await api(`/breakdowns/country${window}&limit=10`);
  expect(d.sections.geo.countries).toEqual(countries);
  expect(countries.map((c: { label: string }) => c.label)).toEqual(expect.arrayContaining(['DE', 'US']));
  expect(d.sections.heatmap.cells).toEqual(await api(`/heatmap${window}`));
  expect(d.sections.revenue).toMatchObject({ revenue_cents: 4200, payments: 1, currency: 'USD' });
  expect(d.sections.pages.pages).toEqual(await api(`/breakdowns/path${window}&limit=10`));
  expect(d.sections.funnel.funnels).toHaveLength(1);
  // No internal id leaves the public feed: the funnel is drawn by its name.
  expect(Object.keys(d.sections.funnel.funnels[0]).sort()).toEqual(['name', 'steps', 'window_seconds']);
  expect(JSON.stringify(d)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  expect(d.sections.funnel.funnels[0].steps.map((s: { visitors: number }) => s.visitors)).toEqual([3, 2]);
  expect(d.sections.keywords).toEqual({ available: false, message: expect.any(String) });
  expect(d.sections.ai_panel.assistants.map((r: { label: string }) => r.label)).toEqual(['ChatGPT']);
  expect(d.sections.ai_panel.assistants.map((r: { visitors: number }) => r.visitors)).toEqual((await api(`/ai/referrals${window}`)).map((r: { visitors: number }) => r.visitors));
  expect(d.sections.ai_panel.crawler_views).toBe(1);
  expect(d.sections.ai_panel.crawlers).toEqual((await api(`/ai/crawlers${window}&limit=5`)).map((r: { crawler: string; operator: string; kind: string; views: number }) =>
    ({ label: r.crawler, operator: r.operator, kind: r.kind, views: r.views })));
  expect(d.sections.ai_panel.crawlers).toHaveLength(1);
  const quality = await api(`/channel-quality${window}&limit=6`);
  expect(quality.length).toBeGreaterThan(0);
  expect(d.sections.channel_quality.channels).toEqual(quality);
});

test('a tz in any letter case is read as ClickHouse spells it, not answered 500', async () => {
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: {} })).body.data;
  const res = await feed(board.slug, '?period=last7d&tz=europe/paris');
  expect(res.status).toBe(200);
  expect(res.body.data.range).toMatchObject({ tz: 'Europe/Paris' });
  expect((await feed(board.slug, '?period=last7d&tz=Mars/Olympus')).status).toBe(400);
});

test('the widget feed: online uses the 10-minute window; revenue only with publish_revenue', async () => {
  const on = await svc.api('PUT', `/sites/${t.siteId}/widget`, { token: t.token, body: { enabled: true, type: 'realtime', metric: 'online' } });
  expect(on.status).toBe(200);
  const slug = on.body.data.slug;
  const online = (await request('GET', `${svc.base}/widget/${slug}.json`)).body.data;
  const realtime10 = await api('/realtime?minutes=10');
  const realtime30 = await api('/realtime?minutes=30');
  expect(realtime10.visitors).not.toBe(realtime30.visitors); // the fixture makes the two windows differ
  expect(online).toMatchObject({ label: 'Online now', value: realtime10.visitors, type: 'realtime', metric: 'online' });
  expect(online.series).toHaveLength(30);
  expect(online).not.toHaveProperty('revenue');

  await svc.api('PUT', `/sites/${t.siteId}/widget`, { token: t.token, body: { type: 'analytics', metric: 'views' } });
  const views = (await request('GET', `${svc.base}/widget/${slug}.json`)).body.data;
  const overview = await api('/overview?period=last30d&tz=UTC');
  expect(views).toMatchObject({ value: overview.views, unit: 'count' });
  expect(views.series).toHaveLength(30);

  await svc.api('PUT', `/sites/${t.siteId}/widget`, { token: t.token, body: { type: 'revenue', publish_revenue: true } });
  const money = (await request('GET', `${svc.base}/widget/${slug}.json`)).body.data;
  expect(money).toMatchObject({ unit: 'money', value: 4200, revenue: { revenue_cents: 4200, currency: 'USD' } });
});

test('with a search-console connection the keywords section lists the top terms of /search/terms', async () => {
  const store = svc.running.ctx.store;
  await store.insert('integrations', [{
    site_id: t.siteId, provider: 'search_console', credentials: '', webhook_secret: '', connected_at: '2026-03-01 00:00:00.000',
    backfill_state: 'completed', backfill_counts: '{}', backfill_started_at: null, backfill_finished_at: null, backfill_error: null, version: 1, is_deleted: 0,
  }]);
  await store.insert('search_console', [['tally', 7, 70], ['web analytics', 3, 300]].map(([term, clicks, impressions]) => ({
    site_id: t.siteId, date: '2026-03-09', term, hostname: 'example.com', path: '/', clicks, impressions, position_sum: impressions, is_final: 1, version: 1,
  })));
  const board = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { keywords: true } })).body.data;
  // A window no earlier test asked for: board feeds are cached for a short while.
  const d = (await feed(board.slug, '?period=last30d')).body.data;
  const terms = await api('/search/terms?period=last30d&tz=UTC&limit=10');
  expect(terms.map((r: { term: string }) => r.term)).toEqual(['tally', 'web analytics']);
  expect(d.sections.keywords).toEqual({
    available: true,
    terms: terms.map(({ pages: _p, ...r }: { pages: unknown; term: string }) => ({ label: r.term, ...r })),
  });
});

test('with revenue off a funnel is shown up to its first payment step (who paid is revenue), and not at all when it starts with one', async () => {
  for (const steps of [
    [{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }, { kind: 'payment' }],
    [{ kind: 'payment' }, { kind: 'view', value: '/' }],
  ]) {
    expect((await svc.api('POST', `/sites/${t.siteId}/funnels`, { token: t.token, body: { name: 'Checkout', steps } })).status).toBe(201);
  }
  // Funnels made at one (frozen) instant list in id order: compared as a set.
  const kinds = (d: { sections: { funnel: { funnels: { steps: { kind: string }[] }[] } } }) =>
    d.sections.funnel.funnels.map((f) => f.steps.map((s) => s.kind).join(' > ')).sort();

  const off = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { funnel: true, revenue: false } })).body.data;
  const hidden = await feed(off.slug, '?period=month');
  expect(kinds(hidden.body.data)).toEqual(['view > goal', 'view > goal']);
  expect(hidden.text).not.toContain('payment');

  const on = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: { revenue: true } })).body.data;
  const shown = (await feed(on.slug, '?period=month')).body.data;
  expect(kinds(shown)).toEqual(['payment > view', 'view > goal', 'view > goal > payment']);
  // v1 viewed pricing, signed up and paid; the truncated funnel's first steps have the same figures either way.
  const paying = shown.sections.funnel.funnels.find((f: { steps: unknown[] }) => f.steps.length === 3);
  expect(paying.steps.map((s: { visitors: number }) => s.visitors)).toEqual([3, 2, 1]);
});

test('imported history states the range its series covers: the plan retention clamps the board\'s allowed range', async () => {
  const two = await svc.tenant({ scopes: ['settings:write', 'analytics:read'], sites: 2 });
  const history = async (siteId: string) => {
    const board = (await svc.api('PUT', `/sites/${siteId}/share`, { token: two.token, body: { imported_history: true, max_range_days: 90 } })).body.data;
    return (await feed(board.slug, '?period=last7d')).body.data.sections.imported_history;
  };
  // 7 s into the board's 15 s memo period: the history ends at the board's rounded now, as its windows do.
  setClock('2026-03-10T15:00:07Z');
  const whole = await history(two.siteIds[0]).finally(() => setClock(NOW));
  expect(whole.range).toEqual({ from: '2025-12-10T15:00:00+00:00', to: '2026-03-10T15:00:00+00:00', tz: 'UTC', clamped: false });
  expect(whole.series[0].bucket).toBe('2025-12-10 00:00:00');

  const org = (await svc.running.ctx.repos.getOrg(two.orgId))!;
  await svc.running.ctx.repos.orgs.put({ ...org, retention_days: 20 });
  const clamped = await history(two.siteIds[1]);
  expect(clamped.range).toMatchObject({ from: '2026-02-18T15:00:00+00:00', to: '2026-03-10T15:00:00+00:00', clamped: true });
  expect(clamped.series[0].bucket).toBe('2026-02-18 00:00:00');
});

test('a board with every panel on asks each report once (the revenue panel reuses the summary and the channels)', async () => {
  const all = { geo: true, tech: true, goals: true, pages: true, funnel: true, heatmap: true, revenue: true, sources: true, ai_panel: true, keywords: true, channel_quality: true, imported_history: true };
  const slug = (await svc.api('PUT', `/sites/${t.siteId}/share`, { token: t.token, body: all })).body.data.slug;
  const board = (await liveBoard(svc.running.ctx, slug))!;
  const asked: string[] = [];
  const counting: RunReport = (store, site, days, name, params) => {
    asked.push(`${name} ${JSON.stringify(params)}`);
    return runReport(store, site, days, name, params);
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the feed's JSON, read as a client would
  const d: any = await boardData(svc.running.ctx, board, panelsOf(board.row), boardWindow(board, { period: 'last7d' }), counting);
  expect(asked.filter((a) => a.startsWith('overview '))).toHaveLength(1);
  expect(asked.filter((a) => a.includes('"dimension":"channel"'))).toHaveLength(1);
  expect(new Set(asked).size).toBe(asked.length);
  // Both panels still get what they showed: the top 8 channels, and up to 6 by revenue.
  expect(d.sections.sources.channels.length).toBeLessThanOrEqual(8);
  expect(d.sections.revenue.revenue_cents).toBe(d.summary.revenue_cents);
  expect(d.sections.revenue.by_channel.map((r: { label: string }) => r.label)).toContain(d.sections.sources.channels[0].label);
  // The revenue panel sorts its own copy: the sources panel keeps visitor order.
  const visitors = d.sections.sources.channels.map((r: { visitors: number }) => r.visitors);
  expect(visitors).toEqual([...visitors].sort((a, b) => b - a));
});
