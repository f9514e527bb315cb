import { setClock } from '../../core/clock';
import { seedEvents } from '../../ingest/seed/seed';
import { startTestService, type TestService } from '../support/harness';

/** `tally seed`: realistic shapes, inside the requested window, deterministic per --seed. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
  setClock('2026-04-15T12:00:00Z');
});
afterAll(async () => {
  setClock(null);
  await svc.stop();
});

const q = async <T>(sql: string, siteId: string) => {
  const store = svc.running.ctx.store;
  return store.query<T>(sql.replaceAll('EVENTS', store.table('events')), { s: siteId });
};

test('seed inserts exactly the requested events with realistic mixes', async () => {
  const t = await svc.tenant();
  const out = await svc.admin('seed', { site: t.siteId, events: '20000', days: '30', seed: '7' });
  expect(out).toEqual({ inserted: 20000 });
  const [shape] = await q<Record<string, number>>(`
    SELECT count() AS events, uniqExact(session_id) AS sessions, uniqExact(visitor_id) AS visitors,
      countIf(is_bot = 1) / count() AS bot_share, uniqExact(channel) AS channels, uniqExact(country) AS countries,
      uniqExact(device) AS devices, uniqExact(pathname) AS paths, countIf(name = 'Purchase') AS purchases,
      sumIf(value_cents, name = 'Purchase') AS value, countIf(name = 'exit_link' AND link != '') AS exits,
      countIf(name = 'file_download') AS downloads,
      min(ts) >= toDateTime64('2026-03-16 00:00:00', 3, 'UTC') AS after_start, max(ts) <= toDateTime64('2026-04-15 12:00:00', 3, 'UTC') AS before_now,
      countIf(ts >= toDateTime64('2026-04-15 11:50:00', 3, 'UTC')) AS last_ten_minutes
    FROM EVENTS WHERE site_id = {s:UUID}`, t.siteId);
  expect(shape.events).toBe(20000);
  expect(shape.sessions).toBeGreaterThan(6000);
  expect(shape.visitors).toBeLessThan(shape.sessions); // returning visitors
  expect(shape.bot_share).toBeGreaterThan(0.03);
  expect(shape.bot_share).toBeLessThan(0.12);
  expect(shape.channels).toBeGreaterThanOrEqual(8);
  expect(shape.countries).toBeGreaterThanOrEqual(10);
  expect(shape.devices).toBeGreaterThanOrEqual(4);
  expect(shape.paths).toBeGreaterThan(100);
  expect(shape.purchases).toBeGreaterThan(0);
  expect(shape.value).toBeGreaterThan(0);
  expect(shape.exits).toBeGreaterThan(0);
  expect(shape.downloads).toBeGreaterThan(0);
  expect(shape.after_start).toBe(1);
  expect(shape.before_now).toBe(1);
  // Traffic runs up to now: the realtime report of a fresh seed shows visitors online.
  expect(shape.last_ten_minutes).toBeGreaterThan(0);
  const live = await svc.api('GET', `/sites/${t.siteId}/realtime`, { token: t.token });
  expect(live.body.data.visitors).toBeGreaterThan(0);

  // Zipf: the most viewed path gets far more views than the 50th.
  const ranks = await q<{ c: number }>(`SELECT count() AS c FROM EVENTS WHERE site_id = {s:UUID} AND name = 'pageview' AND is_bot = 0
    GROUP BY pathname ORDER BY c DESC LIMIT 50`, t.siteId);
  expect(ranks[0].c).toBeGreaterThan(ranks[49].c * 10);

  // Multi-page sessions and bounces both exist; every event carries its session's start and entry path.
  const [sess] = await q<Record<string, number>>(`
    SELECT countIf(pv = 1) / count() AS bounce, countIf(pv >= 3) AS long, max(starts) AS starts_per_session, max(entries) AS entries
    FROM (SELECT session_id, countIf(name = 'pageview') AS pv, uniqExact(session_start) AS starts, uniqExact(entry_path) AS entries
          FROM EVENTS WHERE site_id = {s:UUID} GROUP BY session_id)`, t.siteId);
  expect(sess.bounce).toBeGreaterThan(0.25);
  expect(sess.bounce).toBeLessThan(0.65);
  expect(sess.long).toBeGreaterThan(100);
  expect(sess.starts_per_session).toBe(1);
  expect(sess.entries).toBe(1);

  const kinds = await q<{ k: string }>(`SELECT DISTINCT bot_kind AS k FROM EVENTS WHERE site_id = {s:UUID} AND is_bot = 1 ORDER BY k`, t.siteId);
  expect(kinds.map((k) => k.k)).toEqual(expect.arrayContaining(['ai_training', 'ai_user_fetch', 'search_engine', 'http_library']));
  const ai = await q<{ c: number }>(`SELECT count() AS c FROM EVENTS WHERE site_id = {s:UUID} AND channel = 'AI Assistants'`, t.siteId);
  expect(ai[0].c).toBeGreaterThan(0);
});

test('the same --seed gives the same traffic', async () => {
  const a = await svc.tenant();
  const b = await svc.tenant();
  await svc.admin('seed', { site: a.siteId, events: '3000', days: '7', seed: '42' });
  await svc.admin('seed', { site: b.siteId, events: '3000', days: '7', seed: '42' });
  const digest = (siteId: string) => q<{ h: string }>(`SELECT toString(groupBitXor(cityHash64(ts, name, pathname, channel, country, device, value_cents))) AS h
    FROM EVENTS WHERE site_id = {s:UUID}`, siteId);
  expect(await digest(a.siteId)).toEqual(await digest(b.siteId));
});

test("the day curve follows the site's timezone and weekends are quieter", async () => {
  const t = await svc.tenant({ timezone: 'America/New_York' });
  await svc.admin('seed', { site: t.siteId, events: '40000', days: '28', seed: '3' });
  const share = async (zone: string, hours: [number, number]) => Number((await q<{ s: number }>(`
    SELECT countIf(toHour(ts, '${zone}') BETWEEN ${hours[0]} AND ${hours[1]}) / count() AS s
    FROM EVENTS WHERE site_id = {s:UUID} AND is_bot = 0`, t.siteId))[0].s);
  // Local working hours hold most of the traffic; the same clock hours in UTC are New York's night and morning.
  expect(await share('America/New_York', [9, 17])).toBeGreaterThan(0.55);
  expect(await share('UTC', [9, 17])).toBeLessThan(0.5);
  expect(await share('America/New_York', [1, 5])).toBeLessThan(0.06);
  const [week] = await q<{ weekday: number; weekend: number }>(`
    SELECT countIf(toDayOfWeek(ts, 0, 'America/New_York') < 6) / 5 AS weekday, countIf(toDayOfWeek(ts, 0, 'America/New_York') >= 6) / 2 AS weekend
    FROM EVENTS WHERE site_id = {s:UUID}`, t.siteId);
  expect(week.weekday / week.weekend).toBeGreaterThan(1.3);
  expect(week.weekday / week.weekend).toBeLessThan(1.65);
  const days = (await q<{ c: number }>(`SELECT count() / uniqExact(toDate(ts, 'America/New_York')) AS c FROM EVENTS WHERE site_id = {s:UUID} AND toDayOfWeek(ts, 0, 'America/New_York') < 6
    AND ts < toDateTime64('2026-04-13 00:00:00', 3, 'America/New_York') GROUP BY toDayOfWeek(ts, 0, 'America/New_York')`, t.siteId)).map((r) => Number(r.c));
  expect(Math.min(...days) / Math.max(...days)).toBeGreaterThan(0.85); // the moved weekend traffic spreads over Monday to Friday (before yesterday, which holds today's sessions that would end after now)
});

test('seeding twice (same --seed, a moment later) adds new visitors and sessions instead of doubling the first run', async () => {
  const t = await svc.tenant();
  const shape = async () => (await q<{ sessions: number; visitors: number; bounce: number; doubled: number }>(`
    SELECT uniqExact(session_id) AS sessions, uniqExact(visitor_id) AS visitors, countIf(pv = 1) / count() AS bounce, countIf(dup) AS doubled
    FROM (SELECT session_id, any(visitor_id) AS visitor_id, countIf(name = 'pageview') AS pv, count() > uniqExact(ts, name) AS dup
          FROM EVENTS WHERE site_id = {s:UUID} GROUP BY session_id)`, t.siteId))[0];
  await svc.admin('seed', { site: t.siteId, events: '5000', days: '7' });
  const once = await shape();
  setClock('2026-04-15T12:00:01Z');
  try {
    await svc.admin('seed', { site: t.siteId, events: '5000', days: '7' });
  } finally {
    setClock('2026-04-15T12:00:00Z');
  }
  const twice = await shape();
  expect(twice.doubled).toBe(0);
  expect(twice.sessions).toBeGreaterThan(once.sessions * 1.9);
  expect(twice.visitors).toBeGreaterThan(once.visitors * 1.9);
  expect(Math.abs(twice.bounce - once.bounce)).toBeLessThan(0.05);
});

test('the reported number is the rows this seed stored, also on a site that already has events', async () => {
  const t = await svc.tenant();
  const count = async () => Number((await q<{ c: number }>('SELECT count() AS c FROM EVENTS WHERE site_id = {s:UUID}', t.siteId))[0].c);
  expect(await svc.admin('seed', { site: t.siteId, events: '1', days: '3', seed: '5' })).toEqual({ inserted: 1 });
  expect(await count()).toBe(1);
  expect(await svc.admin('seed', { site: t.siteId, events: '777', days: '3', seed: '6' })).toEqual({ inserted: 777 });
  expect(await count()).toBe(778);
});

test('seed refuses bad arguments', async () => {
  const t = await svc.tenant();
  await expect(svc.admin('seed', { site: t.siteId, events: 'many', days: '7' })).rejects.toThrow();
  await expect(svc.admin('seed', { site: '00000000-0000-4000-8000-000000000000', events: '10', days: '7' })).rejects.toMatchObject({ status: 404 });
});

test('a seed in several inserts stores exactly the events asked; one stopped by shutdown says how many it stored', async () => {
  const t = await svc.tenant();
  const site = (await svc.running.ctx.repos.getSite(t.siteId))!;
  const store = svc.running.ctx.store;
  const count = async (siteId: string) => Number((await q<{ n: number }>('SELECT count() AS n FROM EVENTS WHERE site_id = {s:UUID}', siteId))[0].n);
  expect(await seedEvents(store, site, { events: 5000, days: 10, seed: 3, sessionsPerInsert: 300 })).toEqual({ inserted: 5000 });
  expect(await count(t.siteId)).toBe(5000);

  // A signal that reads as aborted from its second look on: the seed stops after its first insert.
  const other = await svc.tenant();
  const otherSite = (await svc.running.ctx.repos.getSite(other.siteId))!;
  let looks = 0;
  const shutdown = { get aborted() { return looks++ > 0; } } as AbortSignal;
  const cut = seedEvents(store, otherSite, { events: 5000, days: 10, seed: 3, sessionsPerInsert: 300, signal: shutdown });
  await expect(cut).rejects.toMatchObject({ status: 503, code: 'shutting_down' });
  const message = (await cut.catch((e: Error) => e.message)) as string;
  const said = Number(/stopped after (\d+) of 5000 events/.exec(message)?.[1]);
  expect(said).toBeGreaterThan(0);
  expect(said).toBeLessThan(5000);
  expect(await count(other.siteId)).toBe(said);
});

test('a seed run just after midnight spreads the rest of today over the window instead of piling it on yesterday', async () => {
  setClock('2026-04-15T00:10:00Z');
  try {
    const t = await svc.tenant();
    await svc.admin('seed', { site: t.siteId, events: '60000', days: '15', seed: '5' });
    const days = new Map((await q<{ day: string; n: number }>(
      'SELECT toString(toDate(ts)) AS day, count() AS n FROM EVENTS WHERE site_id = {s:UUID} GROUP BY day', t.siteId,
    )).map((r) => [r.day, Number(r.n)]));
    // Yesterday (a Tuesday) against the Tuesday before: all of today's sessions moved a day back made it about twice as busy.
    const ratio = days.get('2026-04-14')! / days.get('2026-04-07')!;
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.3);
  } finally {
    setClock('2026-04-15T12:00:00Z');
  }
});
