import fc from 'fast-check';
import { DIMENSION_KEYS } from '../../query/registry/dimensions';
import { FILTER_KEYS } from '../../query/registry/filters';
import { FIXTURE } from './reports-fixture';
import { reportSuite, type ReportSuite } from './reports-support';

/**
 * Property: no combination of query parameters on any report endpoint yields a 5xx. Valid inputs
 * answer 200, invalid ones 400 with a code and a message; never a stack trace.
 */
let s: ReportSuite;
beforeAll(async () => {
  s = await reportSuite({ now: '2026-05-20T12:00:00Z' });
  await s.importLines(FIXTURE);
});
afterAll(() => s.stop());

const junk = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', ' ', '%', "'", '"; DROP TABLE events; --', '\\', '{p0:String}', '0', '-1', '1e9', 'null', '[]', '💥', 'NaN'),
);
const instant = fc.oneof(
  fc.date({ min: new Date('1960-01-01T00:00:00Z'), max: new Date('2250-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-05-14T00:00:00+05:30', '2026-10-25T02:30:00+02:00', '2026-05-20T12:00:00.001Z', '2026-05-20'),
  junk,
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

const params = fc.record({
  period: maybe(fc.oneof(fc.constantFrom('today', 'yesterday', 'last24h', 'last7d', 'last30d', 'last12m', 'month', 'year', 'all'), junk)),
  from: maybe(instant),
  to: maybe(instant),
  tz: maybe(fc.oneof(fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham', 'utc', 'EST5EDT', 'Etc/GMT+12'), junk)),
  bots: maybe(fc.oneof(fc.constantFrom('excluded', 'included'), junk)),
  unit: maybe(fc.oneof(fc.constantFrom('minute', 'hour', 'day', 'week', 'month'), junk)),
  limit: maybe(fc.oneof(fc.integer({ min: -5, max: 1005 }).map(String), junk)),
  offset: maybe(fc.oneof(fc.integer({ min: -5, max: 50 }).map(String), junk)),
  minutes: maybe(fc.oneof(fc.integer({ min: -5, max: 400 }).map(String), junk)),
  channel: maybe(fc.oneof(fc.constantFrom('Direct', 'Email'), junk)),
  filterName: maybe(fc.oneof(fc.constantFrom(...FILTER_KEYS), junk)),
  filterValue: fc.oneof(fc.constantFrom('/', '/pricing', '/**', '*', 'DE', 'Signup', '(direct)', 'ai_training'), junk),
});

const path = fc.oneof(
  fc.constantFrom('/overview', '/timeseries', '/heatmap', '/engagement', '/realtime', '/realtime/countries'),
  fc.oneof(fc.constantFrom(...DIMENSION_KEYS), junk.filter((j) => !j.includes('/') && !j.includes('?') && !j.includes('#'))).map((d) => `/breakdowns/${encodeURIComponent(d)}`),
);

test('no combination of query parameters gives a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(path, params, async (p, q) => {
      const { filterName, filterValue, ...rest } = q;
      const query: Record<string, string> = {};
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) query[k] = v;
      if (filterName !== undefined) query[`filter_${filterName}`] = filterValue;
      const res = await s.get(p, query);
      if (res.status >= 500) throw new Error(`${p} ${JSON.stringify(query)} → ${res.status} ${res.text}`);
      // 404 only for a path with no dimension segment at all (no route).
      expect(p === '/breakdowns/' ? [404] : [200, 400]).toContain(res.status);
      if (res.status !== 200) {
        expect(res.body.error.code).toMatch(/^(invalid_request|unknown_dimension|not_found)$/);
        expect(res.body.error.message).toEqual(expect.any(String));
        expect(res.text).not.toMatch(/\bat .*\.ts:\d+/);
      }
    }),
    { numRuns: 300, seed: 20260520 },
  );
}, 300_000);
