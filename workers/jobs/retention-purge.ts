import { rollupFeeder } from '../../clickhouse/feeder';
import {
  PURGED_TABLES, PURGE_STEPS, compactPartition, compactionFor, countStep, maskedPartitions, retentionCutoff, runStep, stepParams,
} from '../../clickhouse/retention';
import type { Store } from '../../clickhouse/store';
import { nowMs } from '../../core/clock';
import { AppError, conflict, notFound, queueUnavailable } from '../../core/errors';
import { logger } from '../../core/logger';
import { serially } from '../../core/serially';
import { DAY_MS } from '../../core/time';
import { redisLeases } from '../../infra/lease';
import type { RedisHandle } from '../../infra/redis';
import type { OrgRow, Repos } from '../../model/repos';
import type { JobDefinition } from '../types';

/**
 * The retention purge (docs/OPERATIONS.md "Retention purge"): for every organisation, removes the
 * per-site data older than its cutoff (clickhouse/retention.ts says what and why). Run daily by a
 * BullMQ job scheduler, once more a few minutes after a worker starts, and by `tally retention purge`.
 * Runs never overlap: one at a time per process, and with a ClickHouse server one at a time across
 * processes by a Redis lease.
 */
export interface PurgeDeps {
  store: Store;
  repos: Repos;
  redis: RedisHandle;
}

export type Deleted = Record<string, number>;

export interface OrgPurge {
  org_id: string;
  retention_days: number;
  /** ISO instant: rows before it were removed. */
  cutoff: string;
  sites: number;
  /** Rows removed per table, as stored (versions and unmerged partial rows count), counted before. */
  deleted: Deleted;
}

export interface PurgeOutcome {
  orgs: OrgPurge[];
  /** The sum over the organisations, per table. */
  deleted: Deleted;
  /**
   * Masked rows freed on disk per table, by applying a partition's deleted mask or dropping a partition
   * left with no visible row (clickhouse/retention.ts compactionFor): every organisation's, whichever
   * run's deletes masked them.
   */
  compacted: Deleted;
  /** Mutations issued, the deletes' and the compactions': 0 when nothing was older than the cutoffs. */
  mutations: number;
}

const LEASE_MS = 60_000;

const zeroes = (): Deleted => Object.fromEntries(PURGE_STEPS.map((s) => [s.name, 0]));
const tableZeroes = (): Deleted => Object.fromEntries(PURGED_TABLES.map((t) => [t, 0]));

/** Purge every organisation, or only `orgId` (404 when there is none). */
export function purgeRetention(deps: PurgeDeps, opts: { orgId?: string } = {}): Promise<PurgeOutcome> {
  return oneAtATime(deps, async () => {
    const all = await deps.repos.orgs.select();
    const orgs = opts.orgId ? all.filter((o) => o.id === opts.orgId) : all;
    if (opts.orgId && !orgs[0]) throw notFound('organisation');
    return purgeOrgs(deps.store, deps.repos, orgs, all, nowMs());
  });
}

/**
 * In-process turns (the scheduled run and a CLI run in one process), plus a Redis lease where other
 * processes share the data. Two runs at once would not corrupt anything (the deletes are idempotent),
 * but each would issue the same mutations.
 */
async function oneAtATime<T>(deps: PurgeDeps, run: () => Promise<T>): Promise<T> {
  return serially(`retention-purge:${deps.store.database}`, async () => {
    if (deps.store.embedded) return run();
    const outcome = await redisLeases(deps.redis, 'retention-purge', LEASE_MS).run(deps.store.database, run);
    if (outcome.held) return outcome.value;
    if (outcome.why === 'busy') throw conflict('conflict', 'A retention purge is already running in another process; try again when it has finished.');
    throw queueUnavailable('Redis is unreachable: with a ClickHouse server the purge runs only under its Redis lease.');
  });
}

async function purgeOrgs(store: Store, repos: Repos, orgs: OrgRow[], all: OrgRow[], now: number): Promise<PurgeOutcome> {
  // The feeder refuses cluster mode too; a lightweight DELETE on a Distributed table would fail anyway.
  if (store.cluster) throw new Error('CLICKHOUSE_CLUSTER: the retention purge does not support cluster mode yet');
  const sites = orgs.length ? await repos.sites.select('org_id IN {o:Array(UUID)}', { o: orgs.map((o) => o.id) }) : [];
  const cutoffOf = new Map(orgs.map((o) => [o.id, retentionCutoff(now, o.retention_days)]));
  // Organisations with one cutoff are purged together: one mutation per table for all of them, not one each.
  const groups = new Map<number, string[]>();
  const siteCount = new Map<string, number>();
  for (const s of sites) {
    const cutoff = cutoffOf.get(s.org_id)!;
    if (!groups.has(cutoff)) groups.set(cutoff, []);
    groups.get(cutoff)!.push(s.id);
    siteCount.set(s.org_id, (siteCount.get(s.org_id) ?? 0) + 1);
  }
  const orgOf = new Map(sites.map((s) => [s.id, s.org_id]));
  const deleted = new Map(orgs.map((o) => [o.id, zeroes()]));
  let mutations = await purgeGroups(store, groups, (site, step, n) => {
    deleted.get(orgOf.get(site)!)![step] += n;
  });
  const total = zeroes();
  const out = orgs.map((org): OrgPurge => {
    const mine = deleted.get(org.id)!;
    for (const [k, n] of Object.entries(mine)) total[k] += n;
    const row = {
      org_id: org.id, retention_days: org.retention_days, cutoff: new Date(cutoffOf.get(org.id)!).toISOString(),
      sites: siteCount.get(org.id) ?? 0, deleted: mine,
    };
    const any = Object.values(mine).some((n) => n > 0);
    logger[any ? 'info' : 'debug']({ orgId: org.id, retentionDays: org.retention_days, cutoff: row.cutoff, deleted: mine }, 'retention purge');
    return row;
  });
  // A partition is dropped only if its month lies before every organisation's cutoff, not only the
  // cutoffs of the organisations this run purged (--org).
  const dropBefore = all.length ? Math.min(...all.map((o) => retentionCutoff(now, o.retention_days))) : null;
  const compacted = await compactMasked(store, dropBefore);
  mutations += compacted.mutations;
  logger.info({ orgs: out.length, mutations, deleted: total, compacted: compacted.rows }, 'retention purge done');
  return { orgs: out, deleted: total, compacted: compacted.rows, mutations };
}

/**
 * Frees the disk the deletes only masked: each partition of a purged table with enough masked rows
 * gets its mask applied, or is dropped when nothing in it is visible (clickhouse/retention.ts).
 */
async function compactMasked(store: Store, dropBefore: number | null): Promise<{ rows: Deleted; mutations: number }> {
  const rows = tableZeroes();
  let mutations = 0;
  for (const p of await maskedPartitions(store)) {
    const how = compactionFor(p, dropBefore);
    if (!how) {
      logger.debug({ table: p.table, partition: p.partition, stored: p.stored, visible: p.visible }, 'retention purge: masked rows left until the partition merges');
      continue;
    }
    const started = Date.now();
    await compactPartition(store, p, how);
    mutations++;
    rows[p.table] += p.stored - p.visible;
    logger.info({ table: p.table, partition: p.partition, how, rowsFreed: p.stored - p.visible, rowsKept: p.visible, ms: Date.now() - started }, 'retention purge compacted');
  }
  return { rows, mutations };
}

/**
 * Every step over every group of sites sharing a cutoff (cutoff -> site ids); returns the mutations
 * issued. Each step runs for every group before the next step, so the rollup feeder is caught up once,
 * after every group's events were deleted and before any rollup is purged.
 */
async function purgeGroups(store: Store, groups: Map<number, string[]>, tally: (site: string, step: string, n: number) => void): Promise<number> {
  if (!groups.size) return 0;
  const groupParams = [...groups].map(([cutoff, siteIds]) => stepParams(siteIds, cutoff));
  let mutations = 0;
  for (const step of PURGE_STEPS) {
    for (const params of groupParams) {
      const counts = await countStep(store, step, params);
      if (!counts.size) continue;
      await runStep(store, step, params);
      mutations++;
      for (const [site, n] of counts) tally(site, step.name, n);
    }
    // A feed that read old events before their delete would add them to the rollups after the rollups
    // were purged: catchUp waits for any feed under way (in this process, or under the lease in another).
    if (step.table === 'events') await rollupFeeder(store).catchUp();
  }
  return mutations;
}

export const retentionPurgeJob: JobDefinition<{ orgId?: string }> = {
  queue: 'retention-purge',
  // A failed run (storage down) is retried within the hour; the next day's run covers it otherwise.
  defaultJobOptions: { attempts: 3, backoff: { type: 'exponential', delay: 5 * 60_000 }, removeOnComplete: 20, removeOnFail: 20 },
  concurrency: 1,
  repeatEveryMs: DAY_MS,
  // Once more 10 minutes after a worker starts: start-up stays light, then data is current.
  runAfterStartMs: 10 * 60_000,
  // With Redis down the purge still runs on the process's timer (after start, then daily): embedded
  // it needs no lease, and a long outage must not keep data past its retention. With a ClickHouse
  // server it needs the Redis lease, so such a run is refused (503, logged) and waits for Redis.
  runsWithoutRedis: true,
  async handler(payload, ctx) {
    try {
      return await purgeRetention(ctx, { orgId: payload?.orgId });
    } catch (err) {
      // Another process is purging right now: this run has nothing left to do.
      if (err instanceof AppError && err.status === 409) return logger.info('retention purge skipped: another process is running it');
      throw err;
    }
  },
};
