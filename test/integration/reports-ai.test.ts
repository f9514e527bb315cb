import type { ReportName } from '../../query/ast';
import { GPTBOT, reportSuite, type Line, type ReportSuite } from './reports-support';

/**
 * The `/ai/*` reports and channel quality (PRODUCT.md §5) on a hand-counted fixture,
 * now = Wed 2026-05-20 12:00 UTC, window last7d = [2026-05-14, 2026-05-21) UTC.
 *  Crawlers: GPTBot (ai_training) / 05-19 12:00, /pricing 05-19 12:05 and 05-20 09:00, and / on 05-10
 *  (before the window); ChatGPT-User (ai_user_fetch) /docs/a 05-18 10:00; OAI-SearchBot (ai_search)
 *  /docs/a 05-18 11:00 and /docs/b 11:30; Googlebot (search_engine, not an AI kind) / 05-18 09:00.
 *  V1 from ChatGPT (utm_source=chatgpt.com) 05-18 14:00: /pricing, /docs/a 2 min later, Signup on /docs/a
 *    3 min after the start; pays 4900 at 15:00.
 *  V2 from chat.openai.com (ChatGPT too) 05-19 09:00: /pricing, a bounce.
 *  V3 from www.perplexity.ai 05-19 10:00: /, then /docs/a 10 min later.
 *  V4 from Google (Organic Search) 05-19 11:00: /, /pricing a minute later, Signup a minute after; pays 2000.
 *  V5 direct 05-20 08:00: /, a bounce.
 */
const CHATGPT_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const OAI_SEARCH = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

const FIXTURE: Line[] = [
  { ts: '2026-05-10T09:00:00Z', path: '/', user_agent: GPTBOT, ip: '20.171.206.1' },
  { ts: '2026-05-19T12:00:00Z', path: '/', user_agent: GPTBOT, ip: '20.171.206.1' },
  { ts: '2026-05-19T12:05:00Z', path: '/pricing', user_agent: GPTBOT, ip: '20.171.206.1' },
  { ts: '2026-05-20T09:00:00Z', path: '/pricing', user_agent: GPTBOT, ip: '20.171.206.1' },
  { ts: '2026-05-18T10:00:00Z', path: '/docs/a', user_agent: CHATGPT_USER, ip: '20.171.207.1' },
  { ts: '2026-05-18T11:00:00Z', path: '/docs/a', user_agent: OAI_SEARCH, ip: '20.171.208.1' },
  { ts: '2026-05-18T11:30:00Z', path: '/docs/b', user_agent: OAI_SEARCH, ip: '20.171.208.1' },
  { ts: '2026-05-18T09:00:00Z', path: '/', user_agent: GOOGLEBOT, ip: '66.249.66.1' },
  { ts: '2026-05-18T14:00:00Z', visitor: 'V1', path: '/pricing', query: 'utm_source=chatgpt.com', country: 'FR' },
  { ts: '2026-05-18T14:02:00Z', visitor: 'V1', path: '/docs/a', country: 'FR' },
  { ts: '2026-05-18T14:03:00Z', visitor: 'V1', path: '/docs/a', name: 'Signup', value_cents: 4900, country: 'FR' },
  { ts: '2026-05-19T09:00:00Z', visitor: 'V2', path: '/pricing', referrer: 'https://chat.openai.com/', country: 'DE' },
  { ts: '2026-05-19T10:00:00Z', visitor: 'V3', path: '/', referrer: 'https://www.perplexity.ai/search?q=tally', country: 'US' },
  { ts: '2026-05-19T10:10:00Z', visitor: 'V3', path: '/docs/a', country: 'US' },
  { ts: '2026-05-19T11:00:00Z', visitor: 'V4', path: '/', referrer: 'https://www.google.com/', country: 'FR' },
  { ts: '2026-05-19T11:01:00Z', visitor: 'V4', path: '/pricing', country: 'FR' },
  { ts: '2026-05-19T11:02:00Z', visitor: 'V4', path: '/pricing', name: 'Signup', country: 'FR' },
  { ts: '2026-05-20T08:00:00Z', visitor: 'V5', path: '/', country: 'US' },
  // 05-02, outside every other window here: spellings the channel rule reads as a listed assistant.
  { ts: '2026-05-02T08:00:00Z', visitor: 'V6', path: '/', referrer: 'https://m.perplexity.ai/search?q=x', country: 'US' },
  { ts: '2026-05-02T09:00:00Z', visitor: 'V7', path: '/', query: 'utm_source=www.chatgpt.com', country: 'US' },
];

let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z' });
  await s.importLines(FIXTURE);
  await s.payment({ id: 'pay_v1', visitor: 'V1', paid_at: '2026-05-18T15:00:00Z', amount: 4900 });
  await s.payment({ id: 'pay_v4', visitor: 'V4', paid_at: '2026-05-19T12:00:00Z', amount: 2000 });
});
afterAll(() => s.stop());

const WEEK = { period: 'last7d' };
const zeroDay = (bucket: string) => ({ bucket, views: 0, ai_training: 0, ai_search: 0, ai_user_fetch: 0 });

describe('GET /ai/series', () => {
  test('AI crawler page views per day and kind, zero-filled; search engines and earlier days left out', async () => {
    const body = await s.ok('/ai/series', { ...WEEK, unit: 'day' });
    expect(body.data).toEqual([
      zeroDay('2026-05-14 00:00:00'), zeroDay('2026-05-15 00:00:00'), zeroDay('2026-05-16 00:00:00'), zeroDay('2026-05-17 00:00:00'),
      { bucket: '2026-05-18 00:00:00', views: 3, ai_training: 0, ai_search: 2, ai_user_fetch: 1 },
      { bucket: '2026-05-19 00:00:00', views: 2, ai_training: 2, ai_search: 0, ai_user_fetch: 0 },
      { bucket: '2026-05-20 00:00:00', views: 1, ai_training: 1, ai_search: 0, ai_user_fetch: 0 },
    ]);
    expect(body.meta.range).toEqual({ from: '2026-05-14T00:00:00+00:00', to: '2026-05-21T00:00:00+00:00', tz: 'UTC', clamped: false });
  });

  test('crawlers are counted whatever bots says; filters narrow them', async () => {
    const excluded = await s.ok('/ai/series', { ...WEEK, unit: 'day', bots: 'excluded' });
    expect(excluded.data.reduce((a: number, r: { views: number }) => a + r.views, 0)).toBe(6);
    const docs = await s.ok('/ai/series', { ...WEEK, unit: 'day', filter_path: '/docs/a' });
    expect(docs.data[4]).toEqual({ bucket: '2026-05-18 00:00:00', views: 2, ai_training: 0, ai_search: 1, ai_user_fetch: 1 });
    expect(docs.data.reduce((a: number, r: { views: number }) => a + r.views, 0)).toBe(2);
    const kind = await s.ok('/ai/series', { ...WEEK, unit: 'day', filter_bot_kind: 'ai_training' });
    expect(kind.data.map((r: { views: number }) => r.views)).toEqual([0, 0, 0, 0, 0, 2, 1]);
  });

  test('hour buckets in a timezone (default unit for a day window)', async () => {
    const body = await s.ok('/ai/series', { from: '2026-05-19T00:00:00+02:00', to: '2026-05-20T00:00:00+02:00', tz: 'Europe/Paris' });
    expect(body.data).toHaveLength(24);
    // 12:00 and 12:05 UTC are 14:00 in Paris.
    expect(body.data.filter((r: { views: number }) => r.views > 0)).toEqual([{ bucket: '2026-05-19 14:00:00', views: 2, ai_training: 2, ai_search: 0, ai_user_fetch: 0 }]);
  });
});

describe('GET /ai/crawlers', () => {
  test('per crawler: operator, kind, views, distinct pages and last seen, most views first', async () => {
    const body = await s.ok('/ai/crawlers', WEEK);
    expect(body.data).toEqual([
      { crawler: 'GPTBot', operator: 'OpenAI', kind: 'ai_training', views: 3, pages: 2, last_seen: '2026-05-20T09:00:00+00:00' },
      { crawler: 'OAI-SearchBot', operator: 'OpenAI', kind: 'ai_search', views: 2, pages: 2, last_seen: '2026-05-18T11:30:00+00:00' },
      { crawler: 'ChatGPT-User', operator: 'OpenAI', kind: 'ai_user_fetch', views: 1, pages: 1, last_seen: '2026-05-18T10:00:00+00:00' },
    ]);
    expect(body.meta.page).toEqual({ limit: 100, offset: 0, has_more: false });
  });

  test('paged with a measured has_more; last_seen in the asked tz', async () => {
    const first = await s.ok('/ai/crawlers', { ...WEEK, limit: '2', tz: 'Asia/Kolkata' });
    expect(first.data.map((r: { crawler: string }) => r.crawler)).toEqual(['GPTBot', 'OAI-SearchBot']);
    expect(first.data[0].last_seen).toBe('2026-05-20T14:30:00+05:30');
    expect(first.meta.page).toEqual({ limit: 2, offset: 0, has_more: true });
    const last = await s.ok('/ai/crawlers', { ...WEEK, limit: '2', offset: '2' });
    expect(last.data.map((r: { crawler: string }) => r.crawler)).toEqual(['ChatGPT-User']);
    expect(last.meta.page.has_more).toBe(false);
  });
});

test('a crawler row stored without a name (another writer, an older version) is listed as (unknown)', async () => {
  const t = await s.svc.tenant({ scopes: ['analytics:read'] });
  const store = s.svc.running.ctx.store;
  const row = (ts: string, pathname: string) => ({
    site_id: t.siteId, ts, name: 'pageview', event_id: crypto.randomUUID(), visitor_id: '7', session_id: '7', session_start: ts,
    is_bot: 1, bot_kind: 'ai_training', crawler_name: '', crawler_operator: '', hostname: 'x.example', pathname,
  });
  await store.insert('events', [row('2026-05-19 10:00:00.000', '/a'), row('2026-05-19 11:00:00.000', '/b')]);
  const res = await s.svc.api('GET', `/sites/${t.siteId}/ai/crawlers?period=last7d`, { token: t.token });
  expect(res.body.data).toEqual([{ crawler: '(unknown)', operator: '', kind: 'ai_training', views: 2, pages: 2, last_seen: '2026-05-19T11:00:00+00:00' }]);
});

describe('GET /ai/pages', () => {
  test('crawl views beside AI-referred visitors, their goals and the revenue of sessions entering there', async () => {
    const body = await s.ok('/ai/pages', WEEK);
    expect(body.data).toEqual([
      { path: '/docs/a', crawler_views: 2, ai_visitors: 2, goals: 1, revenue_cents: 0 },
      { path: '/pricing', crawler_views: 2, ai_visitors: 2, goals: 0, revenue_cents: 4900 },
      { path: '/', crawler_views: 1, ai_visitors: 1, goals: 0, revenue_cents: 0 },
      { path: '/docs/b', crawler_views: 1, ai_visitors: 0, goals: 0, revenue_cents: 0 },
    ]);
  });

  test('a window without the payment shows no revenue', async () => {
    const body = await s.ok('/ai/pages', { from: '2026-05-19T00:00:00Z', to: '2026-05-20T00:00:00Z' });
    expect(body.data).toEqual([
      // Ties are ranked by path.
      { path: '/', crawler_views: 1, ai_visitors: 1, goals: 0, revenue_cents: 0 },
      { path: '/pricing', crawler_views: 1, ai_visitors: 1, goals: 0, revenue_cents: 0 },
      { path: '/docs/a', crawler_views: 0, ai_visitors: 1, goals: 0, revenue_cents: 0 },
    ]);
  });
});

describe('GET /ai/referrals', () => {
  test('human visits per assistant, however the visit was tagged (utm_source or referrer)', async () => {
    const body = await s.ok('/ai/referrals', WEEK);
    expect(body.data).toEqual([
      { assistant: 'ChatGPT', visitors: 2, views: 3, goals: 1, revenue_cents: 4900 },
      { assistant: 'Perplexity', visitors: 1, views: 2, goals: 0, revenue_cents: 0 },
    ]);
    expect(body.meta.page).toEqual({ limit: 100, offset: 0, has_more: false });
  });

  test('a subdomain or www spelling of a listed assistant is that assistant, as the AI Assistants channel counted it', async () => {
    const day = { from: '2026-05-02T00:00:00Z', to: '2026-05-03T00:00:00Z' };
    expect((await s.ok('/breakdowns/channel', day)).data).toEqual([expect.objectContaining({ label: 'AI Assistants', visitors: 2 })]);
    expect((await s.ok('/ai/referrals', day)).data).toEqual([
      { assistant: 'ChatGPT', visitors: 1, views: 1, goals: 0, revenue_cents: 0 },
      { assistant: 'Perplexity', visitors: 1, views: 1, goals: 0, revenue_cents: 0 },
    ]);
  });

  test('filters narrow the visits; crawlers never count, whatever bots says', async () => {
    const fr = await s.ok('/ai/referrals', { ...WEEK, filter_country: 'FR', bots: 'included' });
    expect(fr.data).toEqual([{ assistant: 'ChatGPT', visitors: 1, views: 2, goals: 1, revenue_cents: 4900 }]);
  });
});

describe('GET /channel-quality', () => {
  test('per channel: visitors, bounce rate, median session, conversion, revenue per visitor', async () => {
    const body = await s.ok('/channel-quality', WEEK);
    expect(body.data).toEqual([
      // Sessions of 180 s, 0 s (a bounce) and 600 s; V1 converted and paid 4900.
      { channel: 'AI Assistants', visitors: 3, bounce_rate: 33.33, median_session_seconds: 390, conversion_rate: 33.33, revenue_per_visitor_cents: 1633 },
      { channel: 'Direct', visitors: 1, bounce_rate: 100, median_session_seconds: 0, conversion_rate: 0, revenue_per_visitor_cents: 0 },
      { channel: 'Organic Search', visitors: 1, bounce_rate: 0, median_session_seconds: 120, conversion_rate: 100, revenue_per_visitor_cents: 2000 },
    ]);
    expect(body.meta.page).toEqual({ limit: 100, offset: 0, has_more: false });
  });

  test('filters and paging', async () => {
    const fr = await s.ok('/channel-quality', { ...WEEK, filter_country: 'FR' });
    expect(fr.data.map((r: { channel: string; visitors: number }) => [r.channel, r.visitors])).toEqual([['AI Assistants', 1], ['Organic Search', 1]]);
    const page = await s.ok('/channel-quality', { ...WEEK, limit: '1', offset: '1' });
    expect(page.data.map((r: { channel: string }) => r.channel)).toEqual(['Direct']);
    expect(page.meta.page).toEqual({ limit: 1, offset: 1, has_more: true });
  });

  test('a goal filter narrows conversions, not the denominator; channels without a completion have no row', async () => {
    const body = await s.ok('/channel-quality', { ...WEEK, filter_goal: 'Signup' });
    const ai = body.data.find((r: { channel: string }) => r.channel === 'AI Assistants');
    expect(ai).toMatchObject({ visitors: 1, conversion_rate: 33.33 });
    // Direct (V5) completed nothing: no row, as on breakdowns/channel with the same filter.
    const channels = (await s.ok('/breakdowns/channel', { ...WEEK, filter_goal: 'Signup' })).data.map((r: { label: string }) => r.label);
    expect(body.data.map((r: { channel: string }) => r.channel)).toEqual(['AI Assistants', 'Organic Search']);
    expect([...channels].sort()).toEqual(['AI Assistants', 'Organic Search']);
    const paged = await s.ok('/channel-quality', { ...WEEK, filter_goal: 'Signup', limit: '1', offset: '1' });
    expect(paged.meta.page).toEqual({ limit: 1, offset: 1, has_more: false });
    expect((await s.ok('/channel-quality', { ...WEEK, filter_goal: 'No such goal' })).data).toEqual([]);
  });
});

describe('refusals and reach', () => {
  test.each([
    ['/ai/series', { unit: 'fortnight' }, 'unit'],
    ['/ai/crawlers', { limit: '0' }, 'limit'],
    ['/ai/pages', { period: 'last7d', from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' }, 'period'],
    ['/ai/referrals', { filter_nope: 'x' }, 'filter_nope'],
    ['/channel-quality', { bots: 'maybe' }, 'bots'],
    ['/ai/crawlers', { bots: 'maybe' }, 'bots'],
  ])('%s %j → 400 naming %s', async (path, params, name) => {
    const res = await s.get(path, params as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(name);
  });

  test('another organisation\'s site is 403 before any query runs', async () => {
    const other = await s.svc.tenant({ scopes: ['analytics:read'] });
    const res = await s.svc.api('GET', `/sites/${s.t.siteId}/ai/crawlers`, { token: other.token });
    expect(res.status).toBe(403);
  });

  test('a key without analytics:read gets 403', async () => {
    const key = await s.svc.tenant({ scopes: ['notes:read'] });
    const res = await s.svc.api('GET', `/sites/${key.siteId}/channel-quality`, { token: key.token });
    expect(res.status).toBe(403);
  });
});

/** The session rollup (with raw edges) and raw events must give the same answer. */
describe('rollup and raw events agree', () => {
  test.each([
    ['ai_series', { period: 'last7d', unit: 'day' }],
    ['ai_series', { from: '2026-05-18T10:07:00Z', to: '2026-05-19T12:03:00Z', unit: 'hour' }],
    ['channel_quality', { period: 'last7d' }],
    ['channel_quality', { from: '2026-05-18T14:01:00Z', to: '2026-05-19T10:05:00Z' }],
    ['ai_referrals', { period: 'last7d' }],
  ] as [ReportName, Record<string, string>][])('%s %j', async (report, params) => {
    const { planned, rollup, raw } = await s.bothSources(report, params);
    expect(planned.source).toBe('slices');
    expect(rollup.data).toEqual(raw.data);
    expect(JSON.stringify(raw.data)).not.toBe('[]');
  });
});

// Last in the file: the goal it defines would change the conversion figures above.
describe('a filter naming a page goal', () => {
  test('narrows every AI report to the crawl views of its pages (the rules are read even where goals are not counted)', async () => {
    expect((await s.svc.api('POST', '/goals', { token: s.t.token, body: { site_id: s.t.siteId, name: 'Docs', kind: 'page', path_pattern: '/docs/**' } })).status).toBe(201);
    const docs = { ...WEEK, filter_goal: 'Docs' };
    const series = await s.ok('/ai/series', { ...docs, unit: 'day' });
    expect(series.data[4]).toEqual({ bucket: '2026-05-18 00:00:00', views: 3, ai_training: 0, ai_search: 2, ai_user_fetch: 1 });
    expect(series.data.reduce((a: number, r: { views: number }) => a + r.views, 0)).toBe(3);
    const crawlers = await s.ok('/ai/crawlers', docs);
    expect(crawlers.data.map((r: { crawler: string; views: number }) => [r.crawler, r.views])).toEqual([['OAI-SearchBot', 2], ['ChatGPT-User', 1]]);
    const pages = await s.ok('/ai/pages', docs);
    expect(pages.data.map((r: { path: string; crawler_views: number }) => [r.path, r.crawler_views])).toEqual([['/docs/a', 2], ['/docs/b', 1]]);
  });
});
