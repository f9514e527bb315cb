import type { ReportQuery } from '../../../query/ast';
import {
  clampRetention, decideSource, defaultUnit, excludeBots, expandGoalRules, PASSES, plan, resolveBuckets, resolveRange,
  type GoalRule, type PlanContext,
} from '../../../query/planner';

const ms = (iso: string) => Date.parse(iso);
const NOW = ms('2026-05-10T12:34:56Z');
const ctx = (over: Partial<PlanContext> = {}): PlanContext => ({ now: NOW, retentionDays: 1095, earliestDatum: null, goals: [], ...over });
const base = (over: Partial<ReportQuery> = {}): ReportQuery => ({
  report: 'overview', siteId: '00000000-0000-0000-0000-000000000001', currency: 'USD',
  window: { kind: 'period', period: 'last7d' }, tz: 'UTC', bots: 'excluded', filters: null, ...over,
});
const withRange = (from: string, to: string, over: Partial<ReportQuery> = {}) =>
  base({ range: { from: ms(from), to: ms(to), clamped: false }, ...over });

test('the passes run in the documented order', () => {
  expect(PASSES.map((p) => p.name)).toEqual(['resolveRange', 'clampRetention', 'resolveBuckets', 'excludeBots', 'expandGoalRules', 'decideSource']);
});

describe('resolveRange', () => {
  test.each([
    ['period in tz', base({ tz: 'Europe/Paris', window: { kind: 'period', period: 'today' } }), '2026-05-09T22:00:00.000Z', '2026-05-10T22:00:00.000Z'],
    ['explicit range', base({ window: { kind: 'range', from: ms('2026-01-01T00:00:00Z'), to: ms('2026-01-02T00:00:00Z') } }), '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'],
    ['lookback of minutes includes now', base({ window: { kind: 'lookback', minutes: 10 } }), '2026-05-10T12:24:56.000Z', '2026-05-10T12:34:56.001Z'],
  ])('%s', (_n, q, from, to) => {
    const r = resolveRange(q, ctx()).range!;
    expect([new Date(r.from).toISOString(), new Date(r.to).toISOString(), r.clamped]).toEqual([from, to, false]);
  });
});

describe('clampRetention', () => {
  test.each([
    ['inside retention', 30, '2026-05-01T00:00:00Z', false, '2026-05-01T00:00:00.000Z'],
    ['reaching before it', 7, '2026-05-01T00:00:00Z', true, '2026-05-03T12:34:56.000Z'],
  ])('%s', (_n, days, from, clamped, expectFrom) => {
    const r = clampRetention(withRange(from, '2026-05-11T00:00:00Z'), ctx({ retentionDays: days })).range!;
    expect(r.clamped).toBe(clamped);
    expect(new Date(r.from).toISOString()).toBe(expectFrom);
  });
});

describe('default unit (thresholds inclusive, local calendar)', () => {
  test.each([
    ['2026-05-01T00:00:00Z', '2026-05-03T00:00:00Z', 'hour'],
    ['2026-05-01T00:00:00Z', '2026-05-03T00:00:01Z', 'day'],
    ['2026-02-01T00:00:00Z', '2026-05-01T00:00:00Z', 'day'],
    ['2026-02-01T00:00:00Z', '2026-05-01T00:00:01Z', 'week'],
    ['2024-05-01T00:00:00Z', '2026-05-01T00:00:00Z', 'week'],
    ['2024-05-01T00:00:00Z', '2026-05-02T00:00:00Z', 'month'],
  ])('%s → %s: %s', (from, to, unit) => {
    expect(defaultUnit({ from: ms(from), to: ms(to) }, 'UTC')).toBe(unit);
  });

  test('the thresholds stay inclusive when the window has milliseconds', () => {
    const span = (from: string, to: string) => ({ from: ms(from), to: ms(to) });
    expect(defaultUnit(span('2025-11-13T10:33:45.281Z', '2026-02-13T10:33:45.281Z'), 'UTC')).toBe('day');
    expect(defaultUnit(span('2025-11-13T10:33:45.281Z', '2026-02-13T10:33:45.282Z'), 'UTC')).toBe('week');
    expect(defaultUnit(span('2024-02-13T10:33:45.999Z', '2026-02-13T10:33:45.999Z'), 'UTC')).toBe('week');
    expect(defaultUnit(span('2026-10-23T22:00:00.500Z', '2026-10-25T23:00:00.500Z'), 'Europe/Paris')).toBe('hour');
  });

  test('two local days across a fall-back (49 hours) are still hourly', () => {
    expect(defaultUnit({ from: ms('2026-10-23T22:00:00Z'), to: ms('2026-10-25T23:00:00Z') }, 'Europe/Paris')).toBe('hour');
  });

  test('48 real hours across a spring-forward (49 wall-clock hours) are hourly; one hour more is daily', () => {
    const from = ms('2026-03-08T00:00:00Z');
    expect(defaultUnit({ from, to: from + 48 * 3600_000 }, 'America/New_York')).toBe('hour');
    expect(defaultUnit({ from, to: from + 49 * 3600_000 + 1 }, 'America/New_York')).toBe('day');
  });
});

describe('resolveBuckets', () => {
  test('timeseries labels are local; engagement labels are UTC', () => {
    const q = withRange('2026-05-09T22:00:00Z', '2026-05-10T22:00:00Z', { tz: 'Europe/Paris', unit: 'day' });
    expect(resolveBuckets({ ...q, report: 'timeseries' }, ctx()).buckets).toEqual(['2026-05-10 00:00:00']);
    expect(resolveBuckets({ ...q, report: 'engagement' }, ctx()).buckets).toEqual(['2026-05-09 00:00:00', '2026-05-10 00:00:00']);
  });

  test('more than 10,000 buckets is a 400 naming unit', () => {
    const q = withRange('2026-01-01T00:00:00Z', '2026-05-01T00:00:00Z', { report: 'timeseries', unit: 'minute' });
    expect(() => resolveBuckets(q, ctx())).toThrow(expect.objectContaining({ status: 400, message: expect.stringMatching(/^unit:/) }));
  });

  test('other reports are untouched', () => {
    const q = withRange('2026-01-01T00:00:00Z', '2026-05-01T00:00:00Z');
    expect(resolveBuckets(q, ctx())).toBe(q);
  });
});

describe('excludeBots', () => {
  test.each([
    ['overview', 'excluded', true],
    ['overview', 'included', false],
    ['realtime', 'included', true],
    ['realtime_countries', 'included', true],
    ['channel_quality', 'included', false],
    ['ai_referrals', 'included', true],
    ['ai_series', 'excluded', false],
    ['ai_crawlers', 'excluded', false],
    ['ai_pages', 'excluded', false],
  ] as const)('%s with bots=%s → humanOnly %s', (report, bots, humanOnly) => {
    expect(excludeBots(base({ report, bots }), ctx()).humanOnly).toBe(humanOnly);
  });
});

describe('expandGoalRules', () => {
  const goals: GoalRule[] = [
    { name: 'Signup', kind: 'event', event_name: 'signup', path_pattern: null, revenue_signal: false },
    { name: 'Pricing', kind: 'page', event_name: null, path_pattern: '/pricing/**', revenue_signal: false },
    { name: 'Paid', kind: 'event', event_name: 'purchase', path_pattern: null, revenue_signal: true },
  ];

  const nominatedOnly = { events: ['purchase'], pages: [], anyCustom: false };
  test.each([
    ['no goals defined: every custom event counts', [], null, { events: [], pages: [], anyCustom: true }, null],
    ['none nominated: every custom event and page rule', goals.slice(0, 2), null, { events: [], pages: ['/pricing/**'], anyCustom: true }, null],
    ['nominated goals only', goals, null, nominatedOnly, null],
    // Spec (Timeseries row): goals count only the nominated goals, so a goal filter narrows the rows, not `counted`.
    ['a goal filter selects that goal\'s completions; counted stays nominated', goals, 'Pricing', nominatedOnly, { events: ['Pricing'], pages: ['/pricing/**'], anyCustom: false }],
    ['a defined goal is named in any case; a sent name exactly', goals, 'pRICING', nominatedOnly, { events: ['pRICING'], pages: ['/pricing/**'], anyCustom: false }],
    ['a goal filter on a sent event name', goals, 'newsletter', nominatedOnly, { events: ['newsletter'], pages: [], anyCustom: false }],
    ['a goal filter on a builtin name matches nothing', goals, 'pageview', nominatedOnly, { events: [], pages: [], anyCustom: false }],
  ] as const)('%s', (_n, rules, filterGoal, counted, match) => {
    const filters = filterGoal ? { kind: 'cond' as const, filter: 'goal' as const, op: 'equals' as const, value: filterGoal } : null;
    const q = expandGoalRules(base({ filters }), ctx({ goals: rules as GoalRule[] }));
    expect(q.counted).toEqual(counted);
    expect(q.catalog!.map((e) => e.label)).toEqual(rules.map((g) => g.name));
    if (filterGoal) expect(q.filters).toEqual({ kind: 'goal', label: filterGoal, match });
  });
});

describe('decideSource', () => {
  const aligned = withRange('2026-05-01T00:00:00Z', '2026-05-08T00:00:00Z');
  const cond = (filter: string, value = 'x') => ({ kind: 'cond', filter, op: 'equals', value }) as const;
  test.each([
    ['overview on an aligned window', 'slices', aligned],
    ['a Kolkata day is quarter-aligned', 'slices', withRange('2026-05-10T18:30:00Z', '2026-05-11T18:30:00Z')],
    ['a rolling window (raw edges, rollup inside)', 'slices', withRange('2026-05-01T00:00:01Z', '2026-05-08T00:00:00Z')],
    ['session-attribute filter', 'slices', { ...aligned, filters: cond('country') }],
    ['crawler kind filter', 'slices', { ...aligned, filters: cond('bot_kind') }],
    ['event-level filter', 'events', { ...aligned, filters: cond('path') }],
    ['goal filter', 'events', { ...aligned, filters: { kind: 'goal', label: 'x', match: { events: ['x'], pages: [], anyCustom: false } } }],
    ['session breakdown', 'slices', { ...aligned, report: 'breakdown', dimension: 'channel' }],
    ['page breakdown', 'pages', { ...aligned, report: 'breakdown', dimension: 'path' }],
    ['page breakdown with a path filter', 'pages', { ...aligned, report: 'breakdown', dimension: 'hostname', filters: cond('path_pattern') }],
    ['page breakdown with a link filter', 'events', { ...aligned, report: 'breakdown', dimension: 'path', filters: cond('exit_link') }],
    ['goal breakdown', 'events', { ...aligned, report: 'breakdown', dimension: 'goal' }],
    ['minute buckets', 'events', { ...aligned, report: 'timeseries', unit: 'minute' }],
    ['hour buckets', 'slices', { ...aligned, report: 'timeseries', unit: 'hour' }],
    ['realtime', 'events', { ...aligned, report: 'realtime' }],
    ['AI series, hour buckets', 'slices', { ...aligned, report: 'ai_series', unit: 'hour' }],
    ['AI crawlers (names are on raw events only)', 'events', { ...aligned, report: 'ai_crawlers' }],
    ['AI pages', 'events', { ...aligned, report: 'ai_pages' }],
    ['channel quality', 'slices', { ...aligned, report: 'channel_quality' }],
  ] as [string, string, ReportQuery][])('%s → %s', (_n, source, q) => {
    expect(decideSource(q, ctx()).source).toBe(source);
  });
});

test('plan runs every pass and never mutates its input', () => {
  const q = base({ report: 'timeseries', window: { kind: 'period', period: 'today' }, tz: 'Asia/Kolkata' });
  const frozen = JSON.stringify(q);
  const planned = plan(q, ctx());
  expect(JSON.stringify(q)).toBe(frozen);
  expect(planned).toMatchObject({ unit: 'hour', humanOnly: true, source: 'slices' });
  expect(planned.buckets).toHaveLength(24);
});
