import { reportSuite, type ReportSuite } from './reports-support';

/**
 * Revenue whose session started before the window (2026-05-19 UTC is the window):
 *  carol: from bing.com at 05-18 23:50 (/landing), pays 5000 at 05-19 00:10: no event in the window.
 *  dave: direct at 05-19 10:00 (/), pays 1000 at 10:05.
 *  erin: from google.com with utm_campaign=spring at 05-19 11:00 (/offer), pays nothing.
 * The overview counts both payments; "revenue by channel/source/page follows" the attributed
 * session (PRODUCT §4), so bing.com's revenue gets a row of its own, with no visitors in the window.
 */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z' });
  await s.importLines([
    { ts: '2026-05-18T23:50:00Z', visitor: 'carol', path: '/landing', referrer: 'https://www.bing.com/' },
    { ts: '2026-05-19T10:00:00Z', visitor: 'dave', path: '/' },
    { ts: '2026-05-19T11:00:00Z', visitor: 'erin', path: '/offer', query: 'utm_campaign=spring', referrer: 'https://www.google.com/' },
  ]);
  await s.payment({ id: 'pay_carol', visitor: 'carol', paid_at: '2026-05-19T00:10:00Z', amount: 5000 });
  await s.payment({ id: 'pay_dave', visitor: 'dave', paid_at: '2026-05-19T10:05:00Z', amount: 1000 });
});
afterAll(() => s.stop());

const DAY = { from: '2026-05-19T00:00:00Z', to: '2026-05-20T00:00:00Z' };
const row = (label: string, visitors: number, revenue_cents: number) => ({ label, visitors, views: visitors, goals: 0, revenue_cents });

test('revenue of a session before the window is a row of its own after the ranked rows, so rows add up to the total', async () => {
  expect((await s.ok('/overview', DAY)).data).toMatchObject({ visitors: 2, payments: 2, revenue_cents: 6000 });
  expect((await s.ok('/breakdowns/referrer', DAY)).data).toEqual([row('(direct)', 1, 1000), row('google.com', 1, 0), row('bing.com', 0, 5000)]);
  expect((await s.ok('/breakdowns/channel', DAY)).data).toEqual([row('Direct', 1, 1000), row('Organic Search', 1, 5000)]);
  expect((await s.ok('/breakdowns/entry_path', DAY)).data).toEqual([row('/', 1, 1000), row('/offer', 1, 0), row('/landing', 0, 5000)]);
});

test('paging runs through the ranked rows into the revenue-only ones, has_more measured across both', async () => {
  const pages = [];
  for (let offset = 0; offset < 4; offset++) {
    const body = await s.ok('/breakdowns/referrer', { ...DAY, limit: '1', offset: String(offset) });
    pages.push([body.data.map((r: { label: string }) => r.label), body.meta.page.has_more]);
  }
  expect(pages).toEqual([[['(direct)'], true], [['google.com'], true], [['bing.com'], false], [[], false]]);
  const two = await s.ok('/breakdowns/referrer', { ...DAY, limit: '2', offset: '1' });
  expect(two.data.map((r: { label: string }) => r.label)).toEqual(['google.com', 'bing.com']);
  expect(two.meta.page.has_more).toBe(false);
});

test('a dimension that leaves out sessions without a value gives no empty revenue row; with filters the rows are as documented', async () => {
  // carol's session had no campaign: her revenue is in no utm_campaign row, as her visit would be in none.
  expect((await s.ok('/breakdowns/utm_campaign', DAY)).data).toEqual([row('spring', 1, 0)]);
  // A filter on a session attribute follows the payment to its session, as the unfiltered row does.
  expect((await s.ok('/breakdowns/referrer', { ...DAY, filter_channel: 'Organic Search' })).data).toEqual([row('google.com', 1, 0), row('bing.com', 0, 5000)]);
  // Any other filter needs a matching row of the session in the window (docs/REPORTS.md).
  expect((await s.ok('/breakdowns/referrer', { ...DAY, filter_path: '/offer' })).data).toEqual([row('google.com', 1, 0)]);
  expect((await s.ok('/overview', { ...DAY, filter_path: '/landing' })).data).toMatchObject({ payments: 0, revenue_cents: 0 });
});

test('drilling into a breakdown row keeps its revenue: the filtered overview and breakdown give the row\'s figure', async () => {
  for (const [dimension, filter] of [['channel', 'filter_channel'], ['referrer', 'filter_referrer'], ['entry_path', 'filter_entry_path']]) {
    const rows: { label: string; revenue_cents: number }[] = (await s.ok(`/breakdowns/${dimension}`, DAY)).data;
    for (const r of rows) {
      const overview = (await s.ok('/overview', { ...DAY, [filter]: r.label })).data;
      expect([dimension, r.label, overview.revenue_cents]).toEqual([dimension, r.label, r.revenue_cents]);
      const narrowed: { label: string; revenue_cents: number }[] = (await s.ok(`/breakdowns/${dimension}`, { ...DAY, [filter]: r.label })).data;
      expect(narrowed.map((n) => [n.label, n.revenue_cents])).toEqual([[r.label, r.revenue_cents]]);
    }
  }
});
