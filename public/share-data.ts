import type { AppContext } from '../api/context';
import { funnelReportFor } from '../api/routes/funnels';
import { FunnelsRepo, funnelOut, type Funnel } from '../model/funnels';
import { isoSecondsInZone, rangeMeta, type ResolvedWindow } from '../model/notes-window';
import { isoInZone } from '../query/window/zoned';
import { SECTIONS, type Panels, type Section } from '../model/share';
import type { LiveBoard } from './share';
import type { ReportName, runReport } from '../query';
import { lookBackStart } from '../query/window/resolve';

/**
 * What a share board shows, assembled from the query helper's reports (runReport). Only enabled
 * sections are computed and sent: a disabled section's figures never leave the server, money
 * (revenue, payments, goal values) is scrubbed from every section unless `revenue` is on, and goal
 * figures unless `goals` is on (withoutGoals).
 */
export type RunReport = typeof runReport;

type Row = Record<string, unknown> & { label?: string };

interface BoardContext {
  app: AppContext;
  board: LiveBoard;
  window: ResolvedWindow;
  /** The `revenue` section is on: money, and who paid, may be shown. */
  money: boolean;
  report<T>(name: ReportName, params?: Record<string, string | undefined>): Promise<T>;
  /** The report's whole answer, `meta` (its clamped range) included. */
  answer(name: ReportName, params: Record<string, string | undefined>): ReturnType<RunReport>;
}

const MONEY = new Set(['revenue_cents', 'revenue_per_visitor_cents', 'payments', 'goal_value_cents']);
const GOALS = new Set(['goals', 'conversion_rate']);

const top = (c: BoardContext, dimension: string, limit: number, extra: Record<string, string> = {}) =>
  c.report<Row[]>('breakdown', { dimension, limit: String(limit), ...extra });

/** One entry per section: what it draws. */
const SECTION_DATA = {
  geo: async (c) => ({ countries: await top(c, 'country', 10) }),
  tech: async (c) => ({ browsers: await top(c, 'browser', 8), os: await top(c, 'os', 8), devices: await top(c, 'device', 5) }),
  goals: async (c) => ({ goals: await top(c, 'goal', 10) }),
  pages: async (c) => ({ pages: await top(c, 'path', 10), entry_pages: await top(c, 'entry_path', 10) }),
  funnel: async (c) => ({ funnels: await boardFunnels(c) }),
  heatmap: async (c) => ({ cells: await c.report<Row[]>('heatmap') }),
  revenue: async (c) => {
    const o = await c.report<Row>('overview');
    return {
      currency: c.board.site.currency, revenue_cents: o.revenue_cents, payments: o.payments,
      revenue_per_visitor_cents: o.revenue_per_visitor_cents,
      // A copy: the memo hands the same rows to the sources panel, in visitor order.
      by_channel: [...(await top(c, 'channel', 20))].sort((a, b) => Number(b.revenue_cents ?? 0) - Number(a.revenue_cents ?? 0)).slice(0, 6),
    };
  },
  // The revenue panel's 20 channels, cut: one breakdown query serves both panels.
  sources: async (c) => ({ channels: (await top(c, 'channel', 20)).slice(0, 8), referrers: await top(c, 'referrer', 10), campaigns: await top(c, 'utm_campaign', 8) }),
  ai_panel: async (c) => {
    const [series, crawlers, assistants] = await Promise.all([
      c.report<Row[]>('ai_series'), c.report<Row[]>('ai_crawlers', { limit: '5' }), c.report<Row[]>('ai_referrals', { limit: '8' }),
    ]);
    return {
      crawler_views: series.reduce((a, r) => a + Number(r.views ?? 0), 0),
      series: series.map((r) => ({ bucket: r.bucket, crawler_views: r.views })),
      crawlers: crawlers.map((r) => ({ label: r.crawler, operator: r.operator, kind: r.kind, views: r.views })),
      assistants: assistants.map(({ assistant, ...figures }) => ({ label: assistant, ...figures })),
    };
  },
  // Without a search-console connection (or impressions in the window) say so rather than draw zeros.
  keywords: async (c) => {
    const terms = await c.report<Row[]>('search_terms', { limit: '10' });
    if (terms.length === 0) return { available: false, message: 'No search-console keywords for this period.' };
    return { available: true, terms: terms.map(({ pages: _pages, ...figures }) => ({ label: figures.term, ...figures })) };
  },
  channel_quality: async (c) => ({ channels: await c.report<Row[]>('channel_quality', { limit: '6' }) }),
  imported_history: async (c) => importedHistory(c),
} satisfies Record<Section, (c: BoardContext) => Promise<object>>;

/**
 * A payment step tells how many visitors paid: with revenue off a funnel is shown up to its first
 * payment step (the steps before it have the same figures either way), and not at all when it
 * starts with one.
 */
function withoutPayments(f: Funnel): Funnel | null {
  const cut = f.steps.findIndex((s) => s.kind === 'payment');
  if (cut < 0) return f;
  return cut === 0 ? null : { ...f, steps: f.steps.slice(0, cut) };
}

async function boardFunnels(c: BoardContext) {
  const funnels = (await new FunnelsRepo(c.app.store).list(c.board.site.id, { limit: 3, offset: 0 })).slice(0, 3).map(funnelOut)
    .map((f) => (c.money ? f : withoutPayments(f))).filter((f): f is Funnel => f !== null);
  // Without its id: a public page has no use for it, and no other internal id leaves the public feeds.
  return Promise.all(funnels.map(async (f) => {
    const { funnel_id: _id, ...report } = await funnelReportFor(c.app, c.board.site, f, c.window, false);
    return report;
  }));
}

/**
 * The site's longer history, month by month, over the whole range the board allows. Rows that came
 * in through `events import` are ordinary events, so imported history is part of it.
 */
async function importedHistory(c: BoardContext) {
  // The board's own now (rounded to its memo period), so the history ends where the board's windows do.
  const { tz, now } = c.window;
  const from = isoSecondsInZone(lookBackStart(now, c.board.row.max_range_days, tz), tz);
  const to = isoSecondsInZone(now, tz);
  const { data, meta } = await c.answer('timeseries', { from, to, unit: c.board.row.max_range_days > 92 ? 'month' : 'day' });
  // The range the series covers: the plan's retention may clamp the board's (meta.range says so).
  return { range: meta.range, series: (data as Row[]).map((r) => ({ bucket: r.bucket, visitors: r.visitors })) };
}

/** `value` without the fields `keys` names, at any depth. */
function scrub(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => scrub(v, keys));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.has(k)).map(([k, v]) => [k, scrub(v, keys)]));
  }
  return value;
}

/**
 * With `goals` off, goal completions and conversion rates leave the summary and the other sections'
 * rows too (the owner switched goals off). Channel quality keeps its conversion column: it is one of
 * the figures that section is made of, and the owner switched that section on.
 */
function withoutGoals<T extends { summary: unknown; sections: Record<string, unknown> }>(body: T): T {
  const sections = Object.fromEntries(Object.entries(body.sections).map(([name, v]) => [name, name === 'channel_quality' ? v : scrub(v, GOALS)]));
  return { ...body, summary: scrub(body.summary, GOALS), sections };
}

export async function boardData(app: AppContext, board: LiveBoard, panels: Panels, window: ResolvedWindow, run: RunReport) {
  // The window as asked: each report clamps it to retention as the API does (a window wholly before the
  // cutoff is empty and `clamped`, where the clamped empty window re-read as from/to was refused).
  const base = { from: isoInZone(window.asked.from, window.tz), to: isoInZone(window.asked.to, window.tz), tz: window.tz };
  // Sections ask for the same report (overview, the channel breakdown): each runs once per board.
  const answers = new Map<string, ReturnType<RunReport>>();
  const c: BoardContext = {
    app, board, window, money: panels.revenue,
    answer: (name, params) => {
      const key = `${name} ${JSON.stringify(params)}`;
      let answer = answers.get(key);
      if (!answer) answers.set(key, (answer = run(app.store, board.site, board.retentionDays, name, { ...base, ...params })));
      return answer;
    },
    report: async <T>(name: ReportName, params: Record<string, string | undefined> = {}) => (await c.answer(name, params)).data as T,
  };
  const enabled = SECTIONS.filter((s) => panels[s]);
  const [summary, timeseries, ...sections] = await Promise.all([
    c.report<Row>('overview'),
    c.report<Row[]>('timeseries'),
    ...enabled.map((s) => SECTION_DATA[s](c)),
  ]);
  const body = {
    label: board.row.label,
    site: { name: board.site.name, domain: board.site.domain },
    range: rangeMeta(window),
    max_range_days: board.row.max_range_days,
    panels: enabled,
    summary,
    timeseries: (timeseries as Row[]).map((r) => ({ bucket: r.bucket, visitors: r.visitors, views: r.views })),
    sections: Object.fromEntries(enabled.map((s, i) => [s, sections[i]])),
  };
  const shown = panels.goals ? body : withoutGoals(body);
  return panels.revenue ? shown : (scrub(shown, MONEY) as typeof body);
}
