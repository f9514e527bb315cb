import type { Store } from '../../clickhouse/store';
import { redisLeases } from '../../infra/lease';
import { connectRedis, type RedisHandle } from '../../infra/redis';
import type { Repos } from '../../model/repos';
import { purgeRetention, retentionPurgeJob } from '../../workers/jobs/retention-purge';
import type { WorkerContext } from '../../workers/types';
import { testRedis } from '../support/redis';

/**
 * With a ClickHouse server several processes run workers (and the admin socket): the purge runs under
 * a Redis lease, so a second run elsewhere is refused (the CLI: 409) or skipped (the job), never run
 * beside the first. The store here is a stand-in: nothing has to be purged, and its one query (the
 * compaction's look for masked partitions) finds none.
 */
let redis: RedisHandle;
beforeAll(async () => {
  redis = await testRedis('purge-lease');
});
afterAll(() => redis.close());

const server = { embedded: false, database: 'tally', table: (t: string) => `tally.${t}`, query: async () => [] } as unknown as Store;
const noOrgs = { orgs: { select: async () => [] } } as unknown as Repos;

test('a purge while another process holds the lease is refused, and runs once it is free', async () => {
  const leases = redisLeases(redis, 'retention-purge', 10_000);
  let release!: () => void;
  let taken!: () => void;
  const holding = new Promise<void>((r) => (taken = r));
  const held = leases.run('tally', () => {
    taken();
    return new Promise<void>((r) => (release = r));
  });
  await holding; // the other process holds the lease now (a fixed 50 ms raced Redis on a loaded machine)
  await expect(purgeRetention({ store: server, repos: noOrgs, redis })).rejects.toMatchObject({ status: 409, code: 'conflict' });
  // The scheduled job treats it as done elsewhere: no failure, no retry.
  await expect(retentionPurgeJob.handler({}, { store: server, repos: noOrgs, redis } as unknown as WorkerContext, { made: 0, max: 3 })).resolves.toBeUndefined();
  release();
  await held;
  await expect(purgeRetention({ store: server, repos: noOrgs, redis })).resolves.toMatchObject({ orgs: [], mutations: 0 });
});

test('with Redis down a ClickHouse server\'s purge is refused 503 (no lease), and an embedded one runs without it', async () => {
  const down = connectRedis('redis://127.0.0.1:1', `purge-lease-down-${process.pid}`);
  await down.attempted;
  try {
    await expect(purgeRetention({ store: server, repos: noOrgs, redis: down })).rejects.toMatchObject({
      status: 503, code: 'queue_unavailable', message: expect.stringMatching(/Redis lease/), headers: { 'Retry-After': '5' },
    });
    const embedded = { ...server, embedded: true } as Store;
    await expect(purgeRetention({ store: embedded, repos: noOrgs, redis: down })).resolves.toMatchObject({ orgs: [], mutations: 0 });
  } finally {
    await down.close();
  }
});
