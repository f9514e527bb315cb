import type { ClickHouseSettings } from '@clickhouse/client';
import { settlesWithin } from '../core/deadline';
import { storageUnavailable } from '../core/errors';
import { nextVersion } from '../core/ids';
import { logger } from '../core/logger';
import type { FeedLock } from './feed-lock';
import { isoToCh } from './meta';
import { ROLLUP_FEEDS, type RollupFeed } from './rollups';
import type { Params, Store } from './store';

/**
 * Feeds the report rollups from `events`, off the acknowledgement path.
 *
 * Why not materialized views: every part the embedded engine writes costs about 10 ms of CPU in
 * file-system calls on this machine, and four views made each acknowledged live batch write five
 * parts. Here a live batch writes one part; about once a second the feeder aggregates everything
 * committed since into the rollups, four parts per second whatever the event rate.
 *
 * Exactness: each committed insert into events gets the next block number (`_block_number`). The
 * watermark `fed` says blocks up to it are in every rollup. A feed takes the range (fed, hi], where hi
 * is the highest committed block, records the intent, inserts into each rollup with a deduplication
 * token naming the range (a repeat after a crash is dropped by the engine), then advances `fed`.
 *
 * Freshness: `catchUp()` resolves once every write that finished before the call is in the rollups;
 * reports call it first, so a report sees every event acknowledged before it started.
 *
 * TRAP: in embedded mode every write to events must go through `write()`. The feeder narrows a feed
 * to the sites and times of the writes it knows of (primary-key pruning instead of a scan of every
 * block number); a write it does not know of would be skipped. With a ClickHouse server other
 * processes write too, so there (`shared`) it feeds whole block ranges, reads the watermark afresh
 * for every feed, and feeds only while holding a lease (`FeedLock`) that other processes respect.
 */
export interface WriteHint {
  siteIds: readonly string[];
  /** Event times the write stores, in epoch ms (inclusive). */
  minTs: number;
  maxTs: number;
}

interface PendingWrite extends WriteHint {
  done: boolean;
}

interface FeedState {
  fed: number;
  feeding: number;
}

const SOURCE = 'events';
/** How often finished writes are fed when no report asks first. */
export const FEED_INTERVAL_MS = 1000;

/**
 * How long a report waits for the start-up catch-up before it is refused 503: the listeners open while
 * a large unfed backlog (a crash during a big seed or import) is fed, which can take minutes.
 */
const BOOT_WAIT_MS = 5_000;

/** Shared mode: how long a feed waits for another process's feed to release the lease. */
const LEASE_WAIT_MS = 60_000;

/** Events per feed insert, at most (a single larger block stays whole): bounds a feed's memory. */
export const CHUNK_ROWS = 2_000_000;

/**
 * Each feed insert squashes its whole result into ONE block, so a retry after a crash carries the
 * same rows under the same token whatever order the threads produced them in. optimize_on_insert
 * off: merging rows at insert time cost up to half the feed, and merges do it later anyway.
 */
const FEED_SETTINGS: ClickHouseSettings = {
  max_threads: 2,
  max_insert_threads: '1',
  optimize_on_insert: 0,
  min_insert_block_size_rows: String(CHUNK_ROWS * 4),
  min_insert_block_size_bytes: String(64 * 1024 ** 3),
};

export class RollupFeeder {
  private readonly pending = new Set<PendingWrite>();
  private state: FeedState | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastFeedFailed = false;
  /** The start-up catch-up while it runs (blocks this process's earlier life stored unfed). */
  private booting: Promise<void> | null = null;
  /**
   * A feed has covered whole block ranges since the state was read at start. Until then a feed must not
   * be narrowed to the writes this process knows of: the range also holds an earlier process's unfed
   * blocks, and live writes may arrive meanwhile (the listeners open before the catch-up ends).
   */
  private wholeFed = false;
  /** Shutdown began during the start-up catch-up: it stops at its next rollup insert. */
  private stopping = false;

  /**
   * `afterRollup` runs after each rollup's insert: crash tests throw there to cut a feed short, and
   * start-up tests hold a feed there.
   * `chunkRows` overrides CHUNK_ROWS (tests cut small feeds into several chunks). `shared` (default:
   * not embedded) means other processes feed the same tables. `bootWaitMs` overrides BOOT_WAIT_MS.
   */
  constructor(
    private readonly store: Store,
    private readonly opts: { afterRollup?: (table: string) => void | Promise<void>; chunkRows?: number; shared?: boolean; bootWaitMs?: number } = {},
  ) {}

  private lock: FeedLock | null = null;

  private get shared(): boolean {
    return this.opts.shared ?? !this.store.embedded;
  }

  /** The cross-process lease shared feeders take (set at start-up where Redis is configured). */
  useLock(lock: FeedLock): void {
    this.lock = lock;
  }

  /** Run a write to events; its rows are fed by the next feed after it finishes. */
  async write<T>(hint: WriteHint, fn: () => Promise<T>): Promise<T> {
    const w: PendingWrite = { ...hint, done: false };
    this.pending.add(w);
    try {
      return await fn();
    } finally {
      // A failed write stored nothing, or stored blocks the next feed picks up either way.
      w.done = true;
    }
  }

  /**
   * catchUp, refused (503) when the feed it waited for failed: a report must not answer from rollups
   * that lack events already acknowledged (the failed range is retried by the next feed).
   */
  async upToDate(): Promise<void> {
    if (this.booting && !(await settlesWithin(this.booting, this.opts.bootWaitMs ?? BOOT_WAIT_MS))) {
      throw storageUnavailable('Reports are catching up with events stored before the service restarted; try again shortly.', 5);
    }
    await this.catchUp();
    if (this.lastFeedFailed) {
      throw storageUnavailable('Recent events are not in the reports yet (the rollup feed failed and is being retried); try again shortly.', 2);
    }
  }

  /** Resolves when every write finished before this call is in the rollups. */
  catchUp(): Promise<void> {
    if (this.queued) return this.queued;
    // Alone on the data (embedded) and caught up since start: no write pending means nothing new,
    // so a report pays no statement for this check.
    if (!this.shared && this.state && this.pending.size === 0) return this.running ?? Promise.resolve();
    if (!this.running) {
      this.running = this.feed().finally(() => (this.running = null));
      return this.running;
    }
    this.queued = this.running.then(() => {
      this.queued = null;
      return this.catchUp();
    });
    return this.queued;
  }

  /**
   * Finish an interrupted feed and feed whatever was stored unfed, then feed every second. Resolves when
   * that start-up catch-up is done; the service does not wait for it (reports do, up to BOOT_WAIT_MS),
   * so probes, ingest and the admin socket answer while a large backlog is fed. Throws at once (not a
   * rejection) for what cannot start at all.
   */
  start(): Promise<void> {
    // Refused rather than silently wrong: on a cluster `events` is a Distributed table with no parts
    // of its own, and Replicated tables number blocks before a write commits.
    if (this.store.cluster) throw new Error('CLICKHOUSE_CLUSTER: the rollup feeder does not support cluster mode yet (docs/OPERATIONS.md)');
    // A start (again, on the same engine: tests) reads its state afresh, as a new process does.
    this.stopping = false;
    this.wholeFed = false;
    this.state = null;
    const started = Date.now();
    const booting = this.catchUp().finally(() => {
      this.booting = null;
      if (Date.now() - started > BOOT_WAIT_MS) logger.info({ ms: Date.now() - started }, 'rollups caught up with events stored before the start');
    });
    this.booting = booting;
    this.timer ??= setInterval(() => {
      if ([...this.pending].some((w) => w.done)) void this.catchUp();
    }, FEED_INTERVAL_MS);
    this.timer.unref();
    return booting;
  }

  /**
   * For `/readyz`: catching up with an earlier process's unfed events (reports wait, then 503), behind
   * (the last feed failed: reports 503 until one succeeds), or current.
   */
  get health(): 'catching_up' | 'behind' | 'current' {
    if (this.booting) return 'catching_up';
    return this.lastFeedFailed ? 'behind' : 'current';
  }

  /**
   * Stop the timer after a last feed (shutdown: every acknowledged event reaches the rollups). During
   * the start-up catch-up the feed stops at its next rollup insert instead (a backlog can take minutes,
   * past the shutdown limit): the watermark records where it stopped, and the next start finishes it.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.booting) {
      this.stopping = true;
      await this.booting;
      // A feed a write or report queued meanwhile finds `stopping` and issues nothing; waited for all
      // the same, so storage is never closed under a statement.
      await (this.queued ?? this.running);
      return;
    }
    await this.catchUp();
  }

  /**
   * Never rejects: a failed feed is retried by the next one (its range stays unfed, and its state
   * is read again from storage, where the intent to feed it is recorded).
   */
  private async feed(): Promise<void> {
    // Shutdown cut the start-up catch-up short: the next start finishes it, nothing is fed meanwhile.
    if (this.stopping) return;
    try {
      await this.feedOrSkip();
      this.lastFeedFailed = false;
    } catch (err) {
      this.state = null;
      this.lastFeedFailed = true;
      if (err instanceof FeedStopped) logger.info('rollup catch-up stopped for shutdown; the next start finishes it');
      else logger.error({ err: (err as Error).message }, 'rollup feed failed; retrying with the next feed');
    }
  }

  private async feedOrSkip(): Promise<void> {
    if (!this.shared) return await this.feedOnce();
    // Another process may have moved the watermark since this one last looked.
    this.state = null;
    // Waits out another process's feed: that feed's range may not hold this process's last writes,
    // and a report must count every event acknowledged before it started.
    const fed = this.lock ? await this.lock.withLease(() => this.feedOnce(), LEASE_WAIT_MS) : false;
    if (!fed) logger.debug('rollup feed skipped: no feed lease to take (Redis down, or held by another process too long)');
  }

  private async feedOnce(): Promise<void> {
    let state = (this.state ??= await this.loadState());
    if (state.feeding > state.fed) {
      // A crash or a failed feed cut the last one short: finish it with its own chunks and tokens,
      // then go on from where it ends. (Going on from the old watermark fed that range a second time
      // under other tokens, so nothing deduplicated it: views doubled once new blocks had arrived.)
      await this.feedRange(state.fed, state.feeding, null);
      state = this.state!;
    }
    // Writes finished before hi is read have committed blocks <= hi; only they may be forgotten after.
    const finished = [...this.pending].filter((w) => w.done);
    const hi = await this.highestBlock();
    if (hi > state.fed) {
      // Every write registered now (finished or still running) may own blocks <= hi.
      await this.feedRange(state.fed, hi, this.shared || !this.wholeFed ? null : [...this.pending]);
    }
    this.wholeFed = true;
    for (const w of finished) this.pending.delete(w);
  }

  private async feedRange(lo: number, hi: number, writes: PendingWrite[] | null): Promise<void> {
    await this.saveState({ fed: lo, feeding: hi });
    const scope = writes && writes.length ? narrowTo(writes) : null;
    for (const chunk of await this.chunks(lo, hi, scope)) {
      for (const rollup of ROLLUP_FEEDS) {
        if (this.stopping) throw new FeedStopped();
        const { sql, params } = this.feedSql(rollup, chunk, scope);
        await this.store.command(sql, params, { ...FEED_SETTINGS, insert_deduplication_token: `rollup:${rollup.table}:${chunk.lo}:${chunk.hi}` });
        await this.opts.afterRollup?.(rollup.table);
      }
    }
    await this.saveState({ fed: hi, feeding: hi });
  }

  /**
   * (lo, hi] cut into consecutive block ranges of at most CHUNK_ROWS events. The cut depends only on
   * the rows of each block, so a retried feed cuts the same chunks and repeats the same tokens.
   */
  private async chunks(lo: number, hi: number, scope: WriteHint | null): Promise<BlockRange[]> {
    const { where, params } = rangeWhere({ lo, hi }, scope);
    const blocks = await this.store.query<{ b: number; n: number }>(
      `SELECT _block_number AS b, count() AS n FROM ${this.store.table(SOURCE)} WHERE ${where} GROUP BY b ORDER BY b`,
      params,
    );
    const out: BlockRange[] = [];
    let start = lo;
    let rows = 0;
    let prev = lo;
    for (const { b, n } of blocks) {
      if (rows > 0 && rows + Number(n) > (this.opts.chunkRows ?? CHUNK_ROWS)) {
        out.push({ lo: start, hi: prev });
        start = prev;
        rows = 0;
      }
      rows += Number(n);
      prev = Number(b);
    }
    out.push({ lo: start, hi });
    return out;
  }

  private feedSql(r: RollupFeed, range: BlockRange, scope: WriteHint | null): { sql: string; params: Params } {
    const { where, params } = rangeWhere(range, scope);
    return {
      sql: `INSERT INTO ${this.store.table(r.table)} SELECT ${r.columns} FROM ${this.store.table(SOURCE)} WHERE ${where}${r.where ? ` AND ${r.where}` : ''} GROUP BY ${r.groupBy}`,
      params,
    };
  }

  private async highestBlock(): Promise<number> {
    const [row] = await this.store.query<{ hi: number | null }>(
      `SELECT max(max_block_number) AS hi FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active`,
      { db: this.store.database, t: SOURCE },
    );
    return Number(row?.hi ?? 0);
  }

  private async loadState(): Promise<FeedState> {
    const [row] = await this.store.query<FeedState>(
      `SELECT fed, feeding FROM ${this.store.table('rollup_feed')} FINAL WHERE source = {s:String}`,
      { s: SOURCE },
    );
    // Migration 0400 writes the first row (blocks stored before it were fed by views).
    return row ? { fed: Number(row.fed), feeding: Number(row.feeding) } : { fed: 0, feeding: 0 };
  }

  private async saveState(s: FeedState): Promise<void> {
    await this.store.insert('rollup_feed', [{ source: SOURCE, fed: s.fed, feeding: s.feeding, version: nextVersion() }]);
    this.state = s;
  }
}

/** The start-up catch-up cut short by shutdown (its range stays recorded as being fed). */
class FeedStopped extends Error {}

interface BlockRange {
  lo: number;
  hi: number;
}

/** Events in the block range (lo, hi], narrowed to the writes' sites and times when known. */
function rangeWhere(range: BlockRange, scope: WriteHint | null): { where: string; params: Params } {
  const where = ['_block_number > {lo:UInt64}', '_block_number <= {hi:UInt64}'];
  const params: Params = { lo: range.lo, hi: range.hi };
  if (scope) {
    where.push('site_id IN {sites:Array(UUID)}', "ts >= {from:DateTime64(3, 'UTC')}", "ts <= {to:DateTime64(3, 'UTC')}");
    Object.assign(params, { sites: scope.siteIds, from: isoToCh(new Date(scope.minTs)), to: isoToCh(new Date(scope.maxTs)) });
  }
  return { where: where.join(' AND '), params };
}

/** One site list and one time span covering every write: the primary key (site, day) prunes to them. */
function narrowTo(writes: readonly WriteHint[]): WriteHint {
  const sites = new Set<string>();
  let minTs = Infinity;
  let maxTs = -Infinity;
  for (const w of writes) {
    for (const s of w.siteIds) sites.add(s);
    minTs = Math.min(minTs, w.minTs);
    maxTs = Math.max(maxTs, w.maxTs);
  }
  return { siteIds: [...sites], minTs, maxTs };
}

/** One feeder per engine and database: every store over them shares its watermark and pending writes. */
const feeders = new WeakMap<object, Map<string, RollupFeeder>>();

export function rollupFeeder(store: Store): RollupFeeder {
  let byDb = feeders.get(store.client);
  if (!byDb) feeders.set(store.client, (byDb = new Map()));
  let feeder = byDb.get(store.database);
  if (!feeder) byDb.set(store.database, (feeder = new RollupFeeder(store)));
  return feeder;
}
