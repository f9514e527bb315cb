import {
  agg, and, array, as, asc, bin, col, desc, eq, fn, inSet, join, lambda, lit, not, or, param, scalar, select, star, str,
  subquery, table, tuple, union,
} from '../../../query/sql/ast';
import { compile } from '../../../query/sql/compiler';

const db = { database: 'tally' };
const from = table('events');
const one = (expr: Parameters<typeof select>[0]['columns'][number]) => compile(select({ columns: [expr], from }), db);

describe('compiler: expressions', () => {
  test.each([
    ['column', col('visitor_id'), 'visitor_id', {}],
    ['qualified column', col('paid_at', 'p'), 'p.paid_at', {}],
    ['literal', lit(5), '5', {}],
    ['string param', str('/pricing'), '{p0:String}', { p0: '/pricing' }],
    ['uuid param', param('UUID', '00000000-0000-0000-0000-000000000001'), '{p0:UUID}', { p0: '00000000-0000-0000-0000-000000000001' }],
    ['datetime param', param("DateTime64(3, 'UTC')", '2026-01-01 00:00:00.000'), "{p0:DateTime64(3, 'UTC')}", { p0: '2026-01-01 00:00:00.000' }],
    ['array param', param('Array(String)', ['a', 'b']), '{p0:Array(String)}', { p0: ['a', 'b'] }],
    ['function', fn('uniqExact', col('visitor_id')), 'uniqExact(visitor_id)', {}],
    ['parametric aggregate', agg('quantileExactInclusive', [0.5], col('duration')), 'quantileExactInclusive(0.5)(duration)', {}],
    ['binary', bin('>=', col('ts'), str('x')), '(ts >= {p0:String})', { p0: 'x' }],
    ['and flattens', and(eq(col('a'), lit(1)), and(eq(col('b'), lit(2)), undefined)), '((a = 1) AND (b = 2))', {}],
    ['empty and is true', and(), '1', {}],
    ['or', or(eq(col('a'), lit(1)), eq(col('b'), lit(2))), '((a = 1) OR (b = 2))', {}],
    ['empty or is false', or(), '0', {}],
    ['not', not(eq(col('a'), lit(1))), 'NOT (a = 1)', {}],
    ['in array param', inSet(col('name'), param('Array(String)', ['x'])), 'name IN {p0:Array(String)}', { p0: ['x'] }],
    ['not in', inSet(col('name'), param('Array(String)', ['x']), true), 'name NOT IN {p0:Array(String)}', { p0: ['x'] }],
    ['alias', as(fn('count'), 'views'), 'count() AS views', {}],
    ['lambda', fn('arrayFilter', lambda(['x'], bin('!=', col('x'), str(''))), array(col('a'))), 'arrayFilter((x) -> (x != {p0:String}), [a])', { p0: '' }],
    ['tuple', tuple(col('a'), col('b')), '(a, b)', {}],
    ['star', fn('count', star()), 'count(*)', {}],
  ])('%s', (_name, expr, sql, params) => {
    const out = one(expr);
    expect(out.sql).toBe(`SELECT ${sql}\nFROM tally.events`);
    expect(out.params).toEqual(params);
  });

  test('equal values of the same type share one placeholder, different types do not', () => {
    const out = one(and(eq(col('a'), str('x')), eq(col('b'), str('x')), eq(col('c'), param('UUID', 'x')), eq(col('d'), str('y'))));
    expect(out.sql).toBe('SELECT ((a = {p0:String}) AND (b = {p0:String}) AND (c = {p1:UUID}) AND (d = {p2:String}))\nFROM tally.events');
    expect(out.params).toEqual({ p0: 'x', p1: 'x', p2: 'y' });
  });

  test('identifiers are checked, never escaped', () => {
    expect(() => one(col('a; DROP TABLE x'))).toThrow(/not an identifier/);
    expect(() => one(fn('count)--'))).toThrow(/not an identifier/);
    expect(() => one(as(lit(1), 'x y'))).toThrow(/not an identifier/);
    expect(() => compile(select({ columns: [lit(1)], from: table('events`') }), db)).toThrow(/not an identifier/);
    expect(() => compile(select({ columns: [lit(1)], from }), { database: 'x.y' })).toThrow(/not an identifier/);
  });

  test('a literal must be a finite number', () => {
    expect(() => one(lit(Number.NaN))).toThrow(/finite/);
    expect(() => one(lit(Infinity))).toThrow(/finite/);
  });

  test('hostile values only ever travel as parameters', () => {
    const evil = "x' OR 1=1 --";
    const out = one(eq(col('pathname'), str(evil)));
    expect(out.sql).not.toContain(evil);
    expect(out.params).toEqual({ p0: evil });
  });
});

describe('compiler: relations and clauses', () => {
  test('every clause in order, settings last', () => {
    const out = compile(select({
      columns: [as(col('pathname'), 'label'), as(fn('count'), 'views')],
      from: table('events'),
      where: eq(col('site_id'), param('UUID', 's')),
      groupBy: [col('label')],
      having: bin('>', col('views'), lit(1)),
      orderBy: [desc(col('views')), asc(col('label'))],
      limit: param('UInt32', 11),
      offset: param('UInt64', 0),
      settings: { max_threads: 2 },
    }), db);
    expect(out.sql).toBe([
      'SELECT pathname AS label, count() AS views',
      'FROM tally.events',
      'WHERE (site_id = {p0:UUID})',
      'GROUP BY label',
      'HAVING (views > 1)',
      'ORDER BY views DESC, label ASC',
      'LIMIT {p1:UInt32}',
      'OFFSET {p2:UInt64}',
      'SETTINGS max_threads = 2',
    ].join('\n'));
    expect(out.params).toEqual({ p0: 's', p1: 11, p2: 0 });
  });

  test('FINAL, aliases, system tables', () => {
    expect(compile(select({ columns: [star()], from: table('sessions', { final: true, alias: 's' }) }), db).sql)
      .toBe('SELECT *\nFROM tally.sessions FINAL AS s');
    expect(compile(select({ columns: [col('time_zone')], from: table('time_zones', { system: true }) }), db).sql)
      .toBe('SELECT time_zone\nFROM system.time_zones');
  });

  test('subqueries, IN subqueries and scalar subqueries render on one line', () => {
    const inner = select({ columns: [col('session_id')], from: table('events'), where: eq(col('name'), str('pageview')) });
    const out = compile(select({
      columns: [fn('count')],
      from: subquery(select({ columns: [col('session_id')], from: table('sessions') }), 'x'),
      where: and(inSet(col('session_id'), inner), bin('>=', col('session_start'), scalar(select({ columns: [fn('min', col('ts'))], from: table('events') })))),
    }), db);
    expect(out.sql).toBe([
      'SELECT count()',
      'FROM (SELECT session_id FROM tally.sessions) AS x',
      'WHERE (session_id IN (SELECT session_id FROM tally.events WHERE (name = {p0:String})) AND (session_start >= (SELECT min(ts) FROM tally.events)))',
    ].join('\n'));
  });

  test('joins', () => {
    const out = compile(select({
      columns: [fn('count')],
      from: subquery(select({ columns: [col('visitor_id'), col('paid_at')], from: table('payments') }), 'p'),
      joins: [join('ASOF LEFT', subquery(select({ columns: [col('visitor_id'), col('session_start')], from: table('session_slices') }), 's'),
        and(eq(col('visitor_id', 'p'), col('visitor_id', 's')), bin('>=', col('paid_at', 'p'), col('session_start', 's'))))],
    }), db);
    expect(out.sql).toBe([
      'SELECT count()',
      'FROM (SELECT visitor_id, paid_at FROM tally.payments) AS p',
      'ASOF LEFT JOIN (SELECT visitor_id, session_start FROM tally.session_slices) AS s ON ((p.visitor_id = s.visitor_id) AND (p.paid_at >= s.session_start))',
    ].join('\n'));
  });

  test('union all', () => {
    const a = select({ columns: [lit(1)], from: table('events') });
    expect(compile(union(a, a), db).sql).toBe('SELECT 1\nFROM tally.events\nUNION ALL\nSELECT 1\nFROM tally.events');
    expect(compile(select({ columns: [fn('count')], from: subquery(union(a, a)) }), db).sql)
      .toBe('SELECT count()\nFROM (SELECT 1 FROM tally.events UNION ALL SELECT 1 FROM tally.events)');
  });

  test('nodes are frozen', () => {
    const n = col('a');
    expect(Object.isFrozen(n)).toBe(true);
    expect(() => { (n as { name: string }).name = 'b'; }).toThrow();
  });
});
