import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BUCKETS, BUCKET_UNITS } from '../../../query/registry/buckets';
import { DIMENSIONS, DIMENSION_KEYS, type DimensionDef } from '../../../query/registry/dimensions';
import { FILTERS, FILTER_KEYS, filterValue, type FilterDef, type FilterKey } from '../../../query/registry/filters';
import { parseReport } from '../../../query/params';
import { METRICS, METRIC_KEYS } from '../../../query/registry/metrics';
import { OPERATORS, OPERATOR_KEYS } from '../../../query/registry/operators';
import { col, str, type Expr } from '../../../query/sql/ast';
import { compile } from '../../../query/sql/compiler';
import { select, table } from '../../../query/sql/ast';
import { shownEstimate } from '../../../query/reports/overview';

/** Column names a migration declares for a table (the lines between its CREATE TABLE parentheses). */
function declaredColumns(file: string, tableName: string): Set<string> {
  const sql = readFileSync(path.join(__dirname, '../../../clickhouse/migrations', file), 'utf8');
  const start = sql.indexOf(`{local:${tableName}}`);
  const body = sql.slice(sql.indexOf('(', start) + 1, sql.indexOf('\n)', start));
  return new Set(body.split('\n').map((l) => /^\s+([a-z_]+)\s/.exec(l)?.[1]).filter((x): x is string => !!x));
}

const EVENTS = declaredColumns('0001_events.sql', 'events');
const SLICES = declaredColumns('0200_report_rollups.sql', 'session_slices');
const PAGES = declaredColumns('0202_page_slices.sql', 'page_slices');
const ROLLUP_COLUMNS = { slices: SLICES, pages: PAGES };

function columnsOf(e: unknown, out = new Set<string>()): Set<string> {
  if (!e || typeof e !== 'object') return out;
  const n = e as { kind?: string; name?: string; table?: string };
  if (n.kind === 'column' && !n.table && n.name !== 'x') out.add(n.name!);
  for (const v of Object.values(e)) if (v && typeof v === 'object') columnsOf(v, out);
  return out;
}

const compiles = (e: Expr) => compile(select({ columns: [e], from: table('events') }), { database: 'tally' }).sql;

test('the spec lists: 16 dimensions, 21 filters', () => {
  expect([...DIMENSION_KEYS].sort()).toEqual([
    'browser', 'channel', 'city', 'country', 'device', 'entry_path', 'exit_link', 'file_download', 'goal', 'hostname', 'os',
    'path', 'referrer', 'region', 'utm_campaign', 'utm_term',
  ]);
  expect([...FILTER_KEYS].sort()).toEqual([
    'bot_kind', 'browser', 'channel', 'city', 'country', 'device', 'entry_path', 'exit_link', 'file_download', 'gad_campaign_id',
    'goal', 'hostname', 'os', 'path', 'path_pattern', 'referrer', 'region', 'utm_campaign', 'utm_medium', 'utm_source', 'utm_term',
  ]);
});

test('every key has exactly one registry entry (and no entry lacks a key)', () => {
  expect(Object.keys(DIMENSIONS).sort()).toEqual([...DIMENSION_KEYS].sort());
  expect(Object.keys(FILTERS).sort()).toEqual([...FILTER_KEYS].sort());
  expect(Object.keys(METRICS).sort()).toEqual([...METRIC_KEYS].sort());
  expect(Object.keys(OPERATORS).sort()).toEqual([...OPERATOR_KEYS].sort());
  expect(Object.keys(BUCKETS).sort()).toEqual([...BUCKET_UNITS].sort());
});

describe('dimensions', () => {
  test.each(DIMENSION_KEYS.map((k) => [k]))('%s: row fields follow PRODUCT.md §4 and its SQL reads existing columns', (k) => {
    const def: DimensionDef = DIMENSIONS[k];
    const expected = { session: ['visitors', 'views', 'goals', 'revenue_cents'], page: ['visitors', 'views'], link: ['visitors', 'clicks'], goal: ['visitors', 'goals'] }[def.family];
    expect(def.fields).toEqual(expected);
    const exprs = [def.label(), def.present?.(), def.events?.(), ...Object.values(def.extra).map((e) => e())].filter((e): e is Expr => !!e);
    for (const e of exprs) {
      expect(compiles(e)).toBeTruthy();
      for (const c of columnsOf(e)) expect(EVENTS).toContain(c);
      // Session dimensions are answered from the rollup too: its rows must carry the same columns.
      if (def.family === 'session') for (const c of columnsOf(e)) expect(SLICES).toContain(c);
    }
  });

  test('region and city rows carry country_code', () => {
    expect(Object.keys(DIMENSIONS.region.extra)).toEqual(['country_code']);
    expect(Object.keys(DIMENSIONS.city.extra)).toEqual(['country_code']);
  });
});

describe('filters', () => {
  test.each(FILTER_KEYS.map((k) => [k]))('%s: operator exists, subject reads existing columns; rollup claims hold', (k) => {
    const def: FilterDef = FILTERS[k];
    expect(OPERATOR_KEYS).toContain(def.op);
    if (!def.subject) {
      expect(k).toBe('goal');
      return;
    }
    const e = OPERATORS[def.op].condition(def.subject(), 'v');
    expect(compiles(e)).toBeTruthy();
    for (const c of columnsOf(e)) expect(EVENTS).toContain(c);
    for (const rollup of def.rollups) for (const c of columnsOf(e)) expect(ROLLUP_COLUMNS[rollup]).toContain(c);
    if (def.level === 'session') expect([...def.rollups].sort()).toEqual(['pages', 'slices']);
  });

  const labelled = DIMENSION_KEYS.filter((k) => (DIMENSIONS[k] as DimensionDef).emptyLabel);
  test.each(labelled.map((k) => [k]))('%s: a row labelling empty values can be drilled into: its filter selects the empty value', (k) => {
    const emptyLabel = (DIMENSIONS[k] as DimensionDef).emptyLabel!;
    expect(filterValue(k as FilterKey, emptyLabel)).toBe('');
    expect(filterValue(k as FilterKey, 'x')).toBe('x');
  });

  test('the heatmap\'s channel parameter takes the same labels as filter_channel', () => {
    const q = parseReport('heatmap', { channel: '(not set)' }, { id: 's', currency: 'USD' }, (tz) => tz);
    expect(q.filters).toEqual({ kind: 'cond', filter: 'channel', op: 'equals', value: '' });
  });
});

describe('operators', () => {
  test.each(OPERATOR_KEYS.map((k) => [k]))('%s binds its value as a parameter', (k) => {
    const out = compile(select({ columns: [OPERATORS[k].condition(col('pathname'), "/a'*")], from: table('events') }), { database: 'tally' });
    expect(out.sql).not.toContain("/a'");
    expect(Object.values(out.params).length).toBe(1);
  });
  test('glob means * within a segment, ** across', () => {
    const out = compile(select({ columns: [OPERATORS.glob.condition(col('pathname'), '/blog/*/x/**')], from: table('events') }), { database: 'tally' });
    expect(out.params).toEqual({ p0: '^/blog/[^/]*/x/.*$' });
  });
});

describe('metrics', () => {
  test.each(METRIC_KEYS.map((k) => [k]))('%s knows how its part computes it', (k) => {
    const def = METRICS[k] as { part: string; events?: { raw: (s: unknown) => Expr; slices: unknown }; sessions?: () => Expr; derive?: unknown };
    const scope = { counted: str('c') };
    switch (def.part) {
      case 'events':
        expect(compiles(def.events!.raw(scope))).toBeTruthy();
        for (const c of columnsOf(def.events!.raw(scope))) expect(EVENTS).toContain(c);
        for (const rollup of ['slices', 'pages'] as const) {
          const build = (def.events as Record<string, ((s: unknown) => Expr) | null | undefined>)[rollup];
          if (build) for (const c of columnsOf(build(scope))) expect(ROLLUP_COLUMNS[rollup]).toContain(c);
        }
        break;
      case 'sessions':
        expect(compiles(def.sessions!())).toBeTruthy();
        break;
      case 'derived':
        expect(typeof def.derive).toBe('function');
        break;
      default:
        expect(['first_seen', 'payments']).toContain(def.part);
    }
  });

  test('derived figures', () => {
    expect(METRICS.conversion_rate.derive({ converted: 1, all_visitors: 3 })).toBe(33.33);
    expect(METRICS.conversion_rate.derive({ converted: 0, all_visitors: 0 })).toBe(0);
    expect(METRICS.returning_visitors.derive({ visitors: 10, new_visitors: 4 })).toBe(6);
    expect(METRICS.revenue_per_visitor_cents.derive({ revenue_cents: 1000, visitors: 3 })).toBe(333);
    expect(METRICS.revenue_per_visitor_cents.derive({ revenue_cents: 1000, visitors: 0 })).toBe(0);
  });
});

test('buckets: SQL uses toTimeZone with the zone as a parameter; quarter alignment as documented', () => {
  for (const u of BUCKET_UNITS) {
    const out = compile(select({ columns: [BUCKETS[u].label(col('ts'), str('Asia/Kolkata'))], from: table('events') }), { database: 'tally' });
    expect(out.sql).toContain('toTimeZone(ts, {p0:String})');
    expect(out.params).toMatchObject({ p0: 'Asia/Kolkata' });
  }
  expect(BUCKET_UNITS.filter((u) => BUCKETS[u].quarterAligned)).toEqual(['hour', 'day', 'week', 'month']);
});

describe('the estimated visitors figure (above ESTIMATE_EXACT_BELOW)', () => {
  test('never falls under the exact count of new visitors, who are visitors of the window too', () => {
    expect(shownEstimate(187_348, 187_667)).toBe(187_667); // seen: more new visitors than visitors, 0 returning
    expect(shownEstimate(187_348, 120_001)).toBe(187_348);
    const returning = (visitors: number, fresh: number) => METRICS.returning_visitors.derive!({ visitors, new_visitors: fresh } as never);
    expect(returning(shownEstimate(187_348, 187_667), 187_667)).toBe(0);
  });
});
