import { setClock } from '../../../core/clock';
import type { SessionAttributes } from '../../../ingest/event';
import { SESSION_KEYS } from '../../../ingest/event';
import { LiveSessions, SESSION_GAP_MS, type SessionState } from '../../../ingest/live/sessions';
import { connectRedis, type RedisHandle } from '../../../infra/redis';

/**
 * The in-memory session fallback, used while Redis is unreachable (a real client pointed at a closed
 * port): its expiry follows core/clock like the rest of ingest, so moving the clock expires a session.
 */
let redis: RedisHandle;

beforeAll(async () => {
  redis = connectRedis('redis://127.0.0.1:1', 'tally-test-sessions-memory');
  await redis.attempted;
});

afterAll(async () => {
  setClock(null);
  await redis.close();
});

const T0 = Date.parse('2026-04-15T12:00:00Z');
const state: SessionState = {
  v: '1001', s: '2001', st: T0, l: T0,
  a: Object.fromEntries(SESSION_KEYS.map((k) => [k, `${k}:x`])) as unknown as SessionAttributes,
};

test('a session kept in memory expires when the clock moves past the session gap and its minute of slack', async () => {
  expect(redis.isUp()).toBe(false);
  const sessions = new LiveSessions(redis);
  setClock(new Date(T0));
  await sessions.save(new Map([['site-1:v', state]]));

  setClock(new Date(T0 + SESSION_GAP_MS));
  expect((await sessions.load(['site-1:v'])).get('site-1:v')).toEqual(state);

  setClock(new Date(T0 + SESSION_GAP_MS + 60_001));
  expect((await sessions.load(['site-1:v'])).size).toBe(0);
});
