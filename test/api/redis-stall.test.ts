import Redis from 'ioredis';
import { settlesWithin } from '../../core/deadline';
import { startTestService, type Tenant, type TestService } from '../support/harness';
import { request, type HttpResult } from '../support/http';
import { startStallingProxy, type StallingProxy } from '../support/stalling-proxy';
import { waitFor } from '../support/wait';

/**
 * A Redis that stops answering without closing the connection (a paused process, a peer dead without
 * a reset, a network black hole), simulated by a proxy in front of the test machine's real Redis.
 * Requests must not wait for it: they get the fallbacks of a Redis that is down (rate limits and
 * sessions in memory), and once Redis answers again it is used again.
 */

/** Far beyond the wait a stalled Redis may cost (infra/redis.ts), for a loaded machine; without a bound the request never answers. */
const BOUND_MS = 10_000;
async function within<T>(what: string, answer: Promise<T>): Promise<T> {
  if (!(await settlesWithin(answer, BOUND_MS))) throw new Error(`${what}: no answer within ${BOUND_MS} ms`);
  return answer;
}

const readyz = async (svc: TestService) => (await request('GET', `${svc.base}/readyz`)).body.redis as string;

describe('a Redis that stalls while the service runs', () => {
  let proxy: StallingProxy;
  let svc: TestService;
  let tenant: Tenant;
  let direct: Redis;
  beforeAll(async () => {
    proxy = await startStallingProxy({ host: '127.0.0.1', port: 6379 });
    svc = await startTestService({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, TALLY_TRUST_PROXY: 'loopback' });
    tenant = await svc.tenant();
    direct = new Redis('redis://127.0.0.1:6379');
  });
  afterAll(async () => {
    proxy.resume();
    await svc.stop();
    await proxy.close();
    direct.disconnect();
  });

  const prefix = () => svc.running.ctx.redis.prefix;
  const sessionKeys = () => direct.keys(`${prefix()}:ingest:s:*`);

  function hit(path: string, ip: string): Promise<HttpResult> {
    const body = { n: 'pageview', u: `https://${tenant.domain}${path}`, d: tenant.domain };
    const headers = { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'x-forwarded-for': ip };
    return request('POST', `${svc.base}/api/event`, { raw: JSON.stringify(body), headers });
  }

  async function stored(path: string): Promise<{ session_id: string }[]> {
    const store = svc.running.ctx.store;
    return store.query(`SELECT toString(session_id) AS session_id FROM ${store.table('events')} WHERE site_id = {s:UUID} AND pathname = {p:String}`,
      { s: tenant.siteId, p: path });
  }

  test('Redis stalls: the API and the collection endpoint answer with the fallbacks of a Redis that is down', async () => {
    await waitFor('redis up', async () => (await readyz(svc)) === 'up');
    proxy.stall();

    // Both at once, so each meets the stall: an authenticated request (failure count read and rate
    // limit spent in Redis, normally) and an event (salt and live session state in Redis, normally).
    const [api, first] = await Promise.all([
      within('GET /sites', svc.api('GET', '/sites', { token: tenant.token })),
      within('POST /api/event', hit('/stalled-a', '81.2.69.160')),
    ]);
    expect(api.status).toBe(200);
    expect(first.status).toBe(202);
    expect(await stored('/stalled-a')).toHaveLength(1);
    // A failed authentication is counted in memory and still answered 401.
    expect((await within('a bad token', svc.api('GET', '/sites', { token: 'tly_not-a-key' }))).status).toBe(401);
    expect(await readyz(svc)).toBe('down');

    // The session went on in memory: the visitor's next event is in the same session, and Redis holds
    // no session state.
    const next = await within('the next event', hit('/stalled-b', '81.2.69.160'));
    expect(next.body.session_id).toBe(first.body.session_id);
    expect(await stored('/stalled-b')).toEqual([{ session_id: first.body.session_id }]);
    expect(await sessionKeys()).toEqual([]);

    // Redis counts as down now: requests send it nothing (no rate-limit command waits in the stall).
    const sentBefore = proxy.heldForServer();
    for (let i = 0; i < 3; i++) expect((await within('GET /sites again', svc.api('GET', '/sites', { token: tenant.token }))).status).toBe(200);
    expect(proxy.heldForServer().slice(sentBefore.length)).not.toContain(`${prefix()}:rl`);
  });

  test('Redis answers again: it counts as up again and is used again, for rate limits and sessions', async () => {
    expect(await readyz(svc)).toBe('down'); // still stalled: reconnecting finds no Redis that answers
    proxy.resume();
    await waitFor('redis up again', async () => (await readyz(svc)) === 'up', 30_000);
    const key = await tenant.key();
    expect((await svc.api('GET', '/sites', { token: key.token })).status).toBe(200);
    expect(await direct.exists(`${prefix()}:rl:${key.id}`)).toBe(1);
    const before = (await sessionKeys()).length;
    expect((await hit('/resumed', '8.8.8.8')).status).toBe(202);
    expect((await sessionKeys()).length).toBe(before + 1);
  });
});

describe('a Redis that is stalled when the service starts', () => {
  let proxy: StallingProxy;
  let svc: TestService | undefined;
  beforeAll(async () => {
    proxy = await startStallingProxy({ host: '127.0.0.1', port: 6379 });
    proxy.stall();
  });
  afterAll(async () => {
    proxy.resume();
    await svc?.stop();
    await proxy.close();
  });

  test('the service starts with Redis down and serves requests; Redis is used once it answers', async () => {
    // The connection opens, but its ready check is never answered: start must not wait for it.
    svc = await startTestService({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
    const { token } = await svc.tenant();
    expect(await readyz(svc)).toBe('down');
    expect((await within('GET /sites', svc.api('GET', '/sites', { token }))).status).toBe(200);
    proxy.resume();
    await waitFor('redis up', async () => (await readyz(svc!)) === 'up', 30_000);
  });
});
