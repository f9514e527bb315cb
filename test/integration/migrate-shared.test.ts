import { migrateShared, type Migration } from '../../clickhouse/migrate';
import type { Store } from '../../clickhouse/store';
import { redisLeases } from '../../infra/lease';
import type { RedisHandle } from '../../infra/redis';
import { testRedis } from '../support/redis';

/**
 * Server mode: processes starting together migrate one at a time under a Redis lease
 * (clickhouse/migrate.ts migrateShared). The three-process start over a ClickHouse server is
 * test/e2e/server-mode.test.ts; here, what a starting process does while another holds the lease.
 * The store is a stand-in that records the statements it is sent: nothing is migrated for real.
 */
let redis: RedisHandle;
beforeAll(async () => {
  redis = await testRedis('migrate-shared');
});
afterAll(() => redis.close());

const MIGRATIONS: Migration[] = [{ version: 1, name: 'one', sql: 'CREATE TABLE IF NOT EXISTS {db}.one (x UInt8) ENGINE = MergeTree ORDER BY x;' }];

function recordingStore(recorded: number[]) {
  const sent: string[] = [];
  const store = {
    embedded: false, database: 'tally', table: (t: string) => `tally.${t}`,
    command: async (sql: string) => void sent.push(sql),
    query: async () => recorded.map((version) => ({ version })),
    insert: async () => undefined,
  } as unknown as Store;
  return { store, sent };
}

/** Another process holds the migration lease until `release()`. */
async function holdLease(): Promise<{ release: () => void; held: Promise<unknown> }> {
  let release!: () => void;
  let taken!: () => void;
  const holding = new Promise<void>((r) => (taken = r));
  const held = redisLeases(redis, 'migrate', 10_000).run('tally', () => {
    taken();
    return new Promise<void>((r) => (release = r));
  });
  await holding;
  return { release, held };
}

test('a process that finds another migrating waits for it, then applies only what is not recorded', async () => {
  const other = await holdLease();
  const { store, sent } = recordingStore([1]);
  let mine: Promise<number[]>;
  try {
    mine = migrateShared(store, redisLeases(redis, 'migrate', 10_000), MIGRATIONS, 10_000);
    // Still waiting for the lease: nothing sent to storage meanwhile (a slow machine only waits longer).
    await new Promise((r) => setTimeout(r, 300));
    expect(sent).toEqual([]);
  } finally {
    other.release();
    await other.held;
  }
  await expect(mine).resolves.toEqual([]);
  expect(sent.some((s) => s.includes('tally.one'))).toBe(false);
});

test('a process that waited its whole time for another\'s migrations refuses to start, naming the database and the lease', async () => {
  const other = await holdLease();
  try {
    const { store, sent } = recordingStore([]);
    await expect(migrateShared(store, redisLeases(redis, 'migrate', 10_000), MIGRATIONS, 200)).rejects.toThrow(
      /^CLICKHOUSE_DATABASE: another process kept migrating tally for over 0 s \(Redis lease migrate:tally\); start again when it is done$/,
    );
    expect(sent).toEqual([]);
  } finally {
    other.release();
    await other.held;
  }
});
