import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ClickHouseError, createClient, type ClickHouseClient, type ClickHouseSettings, type Logger } from '@clickhouse/client';
import { logger } from '../core/logger';

/**
 * The one connection factory. Embedded mode plugs chDB into @clickhouse/client; server mode talks
 * HTTP to a ClickHouse server. Callers see the same Store either way and write one SQL dialect.
 *
 * TRAP: chDB ignores the client's `database` option (everything lands in `default`), so every
 * statement names its tables with `store.table('events')` → `tally.events`.
 */
export interface StoreOptions {
  url?: string;
  user?: string;
  password?: string;
  database: string;
  cluster?: string;
  /** Embedded data directory (chDB files live in `<dataDir>/clickhouse`). */
  dataDir?: string;
}

export type Params = Record<string, unknown>;

export interface Store {
  readonly database: string;
  readonly cluster?: string;
  readonly embedded: boolean;
  readonly client: ClickHouseClient;
  table(name: string): string;
  query<T = Record<string, unknown>>(sql: string, params?: Params, settings?: ClickHouseSettings): Promise<T[]>;
  command(sql: string, params?: Params, settings?: ClickHouseSettings): Promise<void>;
  insert(table: string, rows: readonly object[], settings?: ClickHouseSettings): Promise<void>;
  ping(): Promise<boolean>;
  /**
   * The same database over a connection of its own, so its statements do not queue behind this
   * store's. Embedded: chDB runs one statement at a time per connection (and parameterised ones
   * one at a time per process), but separate connections to one data directory run in parallel —
   * live ingest inserts on their own lane, not behind a report or a rollup feed. Server mode: the
   * HTTP client already runs statements in parallel, so this is the same store. Close it when done.
   */
  dedicated(lane: string): Store;
  close(): Promise<void>;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Server mode: the ClickHouse server could not be reached or did not answer (refused, reset, timed
 * out). Not an error of the statement: the API answers it 503 storage_unavailable with Retry-After
 * (api/errors.ts), as it answers a failed rollup feed, instead of 500 internal.
 */
export class StorageUnavailable extends Error {
  constructor(override readonly cause: Error) {
    super(`ClickHouse unreachable: ${cause.message}`);
  }
}

const TRANSPORT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/** A failure of the HTTP exchange itself (a server's own errors are ClickHouseError and pass as they are). */
function transportFailure(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException;
  // Read by shape, not `instanceof Error`: Node's socket errors come from another realm under a test
  // runner's sandbox (Jest), where that check failed and an outage passed as a bug.
  if (typeof e?.message !== 'string' || e instanceof ClickHouseError) return false;
  return TRANSPORT_CODES.has(e.code ?? '') || /^(socket hang up|Timeout error)/i.test(e.message);
}

async function reachable<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw transportFailure(err) ? new StorageUnavailable(err as Error) : err;
  }
}

const BASE_SETTINGS: ClickHouseSettings = {
  // Same number shapes from chDB and a server: 64-bit integers as JSON numbers. Values that need all
  // 64 bits (visitor hashes) are selected with toString().
  output_format_json_quote_64bit_integers: 0,
  date_time_input_format: 'best_effort',
};

/**
 * TRAP: chdb/connection sends a call's settings as `SET k = v;` ahead of the statement, on the
 * connection's session, so they outlive the call. The feeder's one-block insert settings (blocks of
 * up to 64 GB) then governed every later INSERT ... SELECT on that connection, and a memory cap given
 * to one statement would cap every feed after it. An embedded call therefore states every setting
 * any call may set: its own value, or the engine's default (test/integration/store-settings.test.ts
 * checks these against system.settings). A setting missing here is refused, not leaked.
 */
export const PER_CALL_DEFAULTS: Readonly<ClickHouseSettings> = {
  max_threads: 0, // 0 = auto: one per core
  max_insert_threads: '0',
  optimize_on_insert: 1,
  min_insert_block_size_rows: '1048449',
  min_insert_block_size_bytes: '268402944',
  insert_deduplication_token: '',
};

function embeddedSettings(settings: ClickHouseSettings | undefined): ClickHouseSettings {
  for (const k of Object.keys(settings ?? {})) {
    if (!(k in PER_CALL_DEFAULTS)) throw new Error(`ClickHouse setting ${k} is set per call: add its default to PER_CALL_DEFAULTS (clickhouse/store.ts)`);
  }
  return { ...PER_CALL_DEFAULTS, ...settings };
}

// chDB holds one engine per process; @clickhouse/client instances over it are cheap, the engine is not.
const embeddedClients = new Map<string, { client: ClickHouseClient; refs: number }>();

function embeddedClient(dataDir: string, lane = ''): ClickHouseClient {
  const dir = path.join(dataDir, 'clickhouse');
  const key = lane ? `${dir}#${lane}` : dir;
  const existing = embeddedClients.get(key);
  if (existing) {
    existing.refs++;
    return existing.client;
  }
  // Event data and sealed credentials live under the data dir: only the service's user may read them.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Loaded lazily so server mode never touches the native addon.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  // TRAP: chdb bundles its own copy of the client-common types; the runtime shapes are identical.
  const connection = createChdbConnection({ path: dir }) as unknown as Parameters<typeof createClient>[0] extends infer O
    ? O extends { connection?: infer C } ? C : never : never;
  const client = createClient({ connection, clickhouse_settings: BASE_SETTINGS });
  embeddedClients.set(key, { client, refs: 1 });
  return client;
}

function releaseEmbedded(client: ClickHouseClient): Promise<void> {
  for (const [dir, entry] of embeddedClients) {
    if (entry.client !== client) continue;
    if (--entry.refs > 0) return Promise.resolve();
    embeddedClients.delete(dir);
    return entry.client.close();
  }
  return Promise.resolve();
}

/**
 * The client's own log lines as our pino lines: its default logger printed multi-line plain text to
 * the console (16 lines for one refused connection), which a JSON log pipeline cannot read.
 */
class ClientLog implements Logger {
  private readonly log = logger.child({ module: 'clickhouse-client' });
  trace(p: Parameters<Logger['trace']>[0]) { this.log.trace({ args: p.args }, p.message); }
  debug(p: Parameters<Logger['debug']>[0]) { this.log.debug({ args: p.args }, p.message); }
  info(p: Parameters<Logger['info']>[0]) { this.log.info({ args: p.args }, p.message); }
  warn(p: Parameters<Logger['warn']>[0]) { this.log.warn({ args: p.args, err: p.err?.message }, p.message); }
  error(p: Parameters<Logger['error']>[0]) { this.log.error({ args: p.args, err: p.err.message }, p.message); }
}

export function openStore(opts: StoreOptions, lane = ''): Store {
  if (!IDENT.test(opts.database)) throw new Error(`CLICKHOUSE_DATABASE must be an identifier, got "${opts.database}"`);
  if (opts.cluster && !IDENT.test(opts.cluster)) throw new Error(`CLICKHOUSE_CLUSTER must be an identifier`);
  const embedded = !opts.url;
  const client = embedded
    ? embeddedClient(opts.dataDir ?? 'data', lane)
    : createClient({
        url: opts.url,
        username: opts.user,
        password: opts.password,
        clickhouse_settings: BASE_SETTINGS,
        request_timeout: 60_000,
        log: { LoggerClass: ClientLog },
      });
  const db = opts.database;
  const callSettings = (settings?: ClickHouseSettings) => (embedded ? embeddedSettings(settings) : settings);

  return {
    database: db,
    cluster: opts.cluster,
    embedded,
    client,
    table: (name) => {
      if (!IDENT.test(name)) throw new Error(`bad table name ${name}`);
      return `${db}.${name}`;
    },
    query<T>(sql: string, params: Params = {}, settings?: ClickHouseSettings) {
      return reachable((async () => {
        const rs = await client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: callSettings(settings) });
        return (await rs.json()) as T[];
      })());
    },
    async command(sql, params = {}, settings) {
      await reachable(client.command({ query: sql, query_params: params, clickhouse_settings: callSettings(settings) }));
    },
    async insert(table, rows, settings) {
      if (rows.length === 0) return;
      await reachable(client.insert({ table: `${db}.${table}`, values: rows as object[], format: 'JSONEachRow', clickhouse_settings: callSettings(settings) }));
    },
    async ping() {
      try {
        await client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((r) => r.json());
        return true;
      } catch {
        return false;
      }
    },
    dedicated(name) {
      if (!embedded) return { ...this, close: () => Promise.resolve() };
      return openStore(opts, name);
    },
    close: () => (embedded ? releaseEmbedded(client) : client.close()),
  };
}
