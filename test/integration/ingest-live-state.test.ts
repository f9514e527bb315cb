import type { ChildProcess } from 'node:child_process';
import type { SessionAttributes } from '../../ingest/event';
import { SESSION_KEYS } from '../../ingest/event';
import { hash64 } from '../../ingest/hash';
import { identify, type IdentityInput } from '../../ingest/live/identity';
import { DAILY, SaltStore } from '../../ingest/live/salts';
import { encodeState, LiveSessions, SESSION_GAP_MS, type SessionState } from '../../ingest/live/sessions';
import { connectRedis, type RedisHandle } from '../../infra/redis';
import { freePort, startRedis, stopRedis } from '../support/processes';
import { testRedis } from '../support/redis';
import { waitFor } from '../support/wait';

/**
 * Live ingest's Redis state with a real Redis: the synchronous identity path (salts already known)
 * answers what the first, asynchronous one did, and a batch of session states saved in one EVAL is
 * read back as written, with the SET ... PX expiry.
 */
let redis: RedisHandle;

beforeAll(async () => {
  redis = await testRedis('live');
});

afterAll(async () => {
  const keys = await redis.client.keys(`${redis.prefix}:*`);
  if (keys.length) await redis.client.del(...keys);
  await redis.close();
});

describe('identify', () => {
  const input = (over: Partial<IdentityInput> = {}): IdentityInput => ({
    strategy: 'salted_hash', siteId: 'site-1', ip: '81.2.69.160', userAgent: 'Mozilla/5.0 test', fromBrowser: true,
    nowMs: Date.UTC(2026, 10, 21, 12), ...over,
  });

  test('once the salt is known the answer comes without a promise, and is the same answer', async () => {
    const salts = new SaltStore(redis);
    const first = identify(salts, input());
    expect(first).toBeInstanceOf(Promise);
    const fromRedis = await first;
    const again = identify(salts, input());
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toEqual(fromRedis);
    // The id is the daily salted hash of site, IP and user agent.
    const salt = await redis.client.get(`${redis.prefix}:ingest:salt:${DAILY.name}:${Math.floor(input().nowMs / DAILY.periodMs)}`);
    expect(fromRedis.candidates[0].visitorId).toBe(hash64('day', salt!, 'site-1', '81.2.69.160', 'Mozilla/5.0 test'));
    // Another process (a fresh store) reads the same salt: same visitor.
    expect(await identify(new SaltStore(redis), input())).toEqual(fromRedis);
  });

  test('the previous period\'s salt, when it exists, adds the second candidate on the synchronous path too', async () => {
    const nowMs = Date.UTC(2026, 10, 23, 0, 5);
    const period = Math.floor(nowMs / DAILY.periodMs);
    await redis.client.set(`${redis.prefix}:ingest:salt:day:${period - 1}`, 'yesterday-salt', 'PX', 60_000);
    const salts = new SaltStore(redis);
    const first = await identify(salts, input({ nowMs }));
    const second = identify(salts, input({ nowMs: nowMs + 1000 }));
    expect(second).not.toBeInstanceOf(Promise);
    expect(first.candidates).toHaveLength(2);
    expect(second).toEqual(first);
    expect(first.candidates[1].visitorId).toBe(hash64('day', 'yesterday-salt', 'site-1', '81.2.69.160', 'Mozilla/5.0 test'));
  });
});

describe('LiveSessions', () => {
  const state = (i: number): SessionState => ({
    v: `${1000 + i}`, s: `${2000 + i}`, st: 1_700_000_000_000 + i, l: 1_700_000_000_500 + i,
    a: Object.fromEntries(SESSION_KEYS.map((k) => [k, `${k}:${i}`])) as unknown as SessionAttributes,
  });

  test('a batch saved in one EVAL reads back as written, each key expiring like SET PX', async () => {
    const sessions = new LiveSessions(redis);
    const states = new Map(Array.from({ length: 300 }, (_, i) => [`site-1:${i}`, state(i)] as const));
    await sessions.save(states);
    const loaded = await sessions.load([...states.keys(), 'site-1:absent']);
    expect(loaded.size).toBe(300);
    for (const [k, s] of states) expect(loaded.get(k)).toEqual(s);
    const raw = await redis.client.get(`${redis.prefix}:ingest:s:site-1:7`);
    expect(raw).toBe(encodeState(state(7)));
    const ttl = await redis.client.pttl(`${redis.prefix}:ingest:s:site-1:7`);
    expect(ttl).toBeGreaterThan(SESSION_GAP_MS);
    expect(ttl).toBeLessThanOrEqual(SESSION_GAP_MS + 60_000);
  });

  test('saving again replaces the state and renews the expiry', async () => {
    const sessions = new LiveSessions(redis);
    const key = `${redis.prefix}:ingest:s:site-2:a`;
    await sessions.save(new Map([['site-2:a', state(1)]]));
    await redis.client.pexpire(key, 5_000);
    await sessions.save(new Map([['site-2:a', state(2)]]));
    expect((await sessions.load(['site-2:a'])).get('site-2:a')).toEqual(state(2));
    expect(await redis.client.pttl(key)).toBeGreaterThan(SESSION_GAP_MS);
  });
});

describe('LiveSessions across a Redis outage', () => {
  const state = (i: number, last: number): SessionState => ({
    v: '77', s: `${9000 + i}`, st: 500, l: last,
    a: Object.fromEntries(SESSION_KEYS.map((k) => [k, `${k}:${i}`])) as unknown as SessionAttributes,
  });
  let server: ChildProcess;
  let handle: RedisHandle;
  beforeAll(async () => {
    const port = await freePort();
    server = await startRedis(port);
    handle = connectRedis(`redis://127.0.0.1:${port}`, 'tally-test-outage');
    await handle.attempted;
  });
  afterAll(async () => {
    await handle.close();
    await stopRedis(server);
  });

  test('a session goes on through the outage and after it: neither edge cuts it', async () => {
    const sessions = new LiveSessions(handle);
    await sessions.save(new Map([['site-9:v', state(1, 1000)]]));
    await stopRedis(server);
    await waitFor('redis down', () => !handle.isUp());
    // Down: the session saved while Redis was up is still known.
    expect((await sessions.load(['site-9:v'])).get('site-9:v')).toEqual(state(1, 1000));
    await sessions.save(new Map([['site-9:v', state(1, 2000)]]));
    server = await startRedis(Number(new URL(handle.url).port));
    await waitFor('redis up again', () => handle.isUp());
    // Back: Redis never saw the state the outage wrote; the process's copy carries it on.
    expect((await sessions.load(['site-9:v'])).get('site-9:v')).toEqual(state(1, 2000));
  });

  test('of Redis and this process, the later-active state wins (another process may have gone on with the session)', async () => {
    const sessions = new LiveSessions(handle);
    await sessions.save(new Map([['site-9:w', state(2, 5000)]]));
    await handle.client.set(`${handle.prefix}:ingest:s:site-9:w`, encodeState(state(3, 6000)));
    expect((await sessions.load(['site-9:w'])).get('site-9:w')).toEqual(state(3, 6000));
    await handle.client.set(`${handle.prefix}:ingest:s:site-9:w`, encodeState(state(4, 4000)));
    expect((await sessions.load(['site-9:w'])).get('site-9:w')).toEqual(state(2, 5000));
  });
});
