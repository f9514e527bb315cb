import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * ClickHouse's HTTP interface in front of the real engine, for testing Tally's server mode where no
 * clickhouse-server can be installed. A protocol adapter, never a fake of storage: every statement
 * runs in libchdb (the whole ClickHouse 26.x engine, the generation docker-compose.yml's server runs)
 * over this process's own data directory, with the engine's own parser, parameter binding, settings,
 * MergeTree storage, merges, block numbers and error codes. Only the HTTP layer is written here.
 *
 * What it speaks (what @clickhouse/client 1.x sends and reads back):
 * - POST / with the query in the body, or in the `query` URL parameter with the body appended after a
 *   newline (an INSERT's rows: `INSERT ... FORMAT X` in the parameter, rows in the body); GET / with
 *   `query`; GET/HEAD /ping and GET / without a query answer `Ok.`.
 * - `param_<name>` URL parameters are handed to the engine's binder as the raw text the client sent
 *   (ClickHouse's escaped text format), as a server receives them: the engine parses them by the
 *   placeholder's type. chDB's JS binder is bypassed (it would escape the already escaped text).
 * - `database` (the statement's current database), `default_format`, `query_id` (echoed; a running
 *   duplicate is refused with 216), `session_id` (its own engine connection, kept `session_timeout`
 *   seconds, default 60; in use by another request: 373), and every other URL parameter as a setting
 *   of the engine (an unknown one is the engine's 115 UNKNOWN_SETTING, as on a server).
 * - Authentication: Basic, `X-ClickHouse-User`/`X-ClickHouse-Key`, or `user`/`password` parameters;
 *   none means user `default` with an empty password. Anything but the configured pair is refused
 *   with 516 AUTHENTICATION_FAILED (HTTP 403), as a server refuses it.
 * - Compression: a gzip/deflate/br request body (`Content-Encoding`), and a gzip/deflate/br answer
 *   when the request sets `enable_http_compression=1` and accepts the encoding.
 * - Answers carry `X-ClickHouse-Query-Id`, `-Format`, `-Timezone`, `-Server-Display-Name` and
 *   `-Summary`; errors the server's status code for the exception, `X-ClickHouse-Exception-Code` and
 *   the body `Code: N. DB::Exception: ... (NAME) (version V)`, which the client turns into a
 *   ClickHouseError with that code.
 *
 * Concurrency: requests run on a pool of engine connections to the one data directory (`lanes`,
 * default 4), so statements from several clients run in parallel as on a server. Two limits are the
 * engine library's, not a server's: each connection runs one statement at a time, and statements with
 * parameters run one at a time across the whole process (libchdb's parameter state is not isolated
 * per connection: chdb's own index.js serialises them the same way; running two at once gave wrong
 * values or aborted the engine). Settings are per connection in libchdb, so each request's settings
 * are SET on its connection and set back to DEFAULT before another request needs other values.
 *
 * NOT covered, compared with a real clickhouse-server (see docs/OPERATIONS.md, "How server mode is
 * tested"): the native TCP protocol (port 9000) and the MySQL/PostgreSQL/gRPC interfaces; server-level
 * configuration (config.xml: listen hosts, TLS, memory limits of the server, max_concurrent_queries,
 * macros, remote_servers); users, roles, grants, quotas, settings profiles and readonly users (one
 * user/password pair, allowed everything; GET is not made read-only); cluster (ON CLUSTER, Replicated
 * tables, Keeper, Distributed); system.query_log and other server logs; progress headers
 * (`send_progress_in_http_headers` is accepted and ignored), `wait_end_of_query` (every answer is
 * buffered whole, as with wait_end_of_query=1), ClickHouse's own `compress`/`decompress` block
 * compression, zstd, multipart query parameters, query cancellation when the client disconnects
 * (the statement runs to its end), and the exact byte counts of `X-ClickHouse-Summary` (libchdb
 * reports a result's rows and bytes only: read_* there are the result's, written_rows of an insert
 * is the body's line count).
 */
export interface ClickHouseHttpOptions {
  dataDir: string;
  port?: number;
  host?: string;
  user?: string;
  password?: string;
  /** Engine connections serving requests in parallel. */
  lanes?: number;
}

export interface ClickHouseHttp {
  port: number;
  close(): Promise<void>;
}

interface RawResult {
  bytes: Uint8Array;
  elapsed: number;
  rowsRead: number;
  bytesRead: number;
}

interface Native {
  QueryAsyncConnection(conn: unknown, sql: string, format: string, params?: Record<string, string>): Promise<RawResult>;
}

interface ChdbSession {
  connection: unknown;
  close(): void;
}

/** The engine's connection (one statement at a time) with the settings and database it was left in. */
interface Lane {
  session: ChdbSession;
  settings: Map<string, string>;
  database: string;
  busy: boolean;
}

/** URL parameters that are not engine settings. */
const NOT_SETTINGS = new Set([
  'query', 'database', 'default_format', 'query_id', 'session_id', 'session_timeout', 'session_check',
  'user', 'password', 'quota_key', 'role', 'compress', 'decompress', 'buffer_size', 'stacktrace',
  'client_protocol_version', 'close_session',
]);

/** Settings of the HTTP layer that the engine does not know (a server consumes them itself). */
const HTTP_SETTINGS = new Set([
  'wait_end_of_query', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms', 'http_response_buffer_size',
  'enable_http_compression', 'http_zlib_compression_level', 'http_native_compression_disable_checksumming_on_decompress',
  'http_response_compression_method', 'http_send_progress_interval_ms', 'cancel_http_readonly_queries_on_client_close',
]);

/**
 * The HTTP status a server gives an exception: ClickHouse's exceptionCodeToHTTPStatus
 * (src/Server/HTTP/exceptionCodeToHTTPStatus.cpp), its groups as they are there; any other code is 500.
 */
const STATUS_BY_CODE = new Map<number, number>([
  [194, 401], // REQUIRED_PASSWORD
  ...[192, 193, 516, 512, 497].map((c) => [c, 403] as const), // UNKNOWN_USER, WRONG_PASSWORD, AUTHENTICATION_FAILED, SET_NON_GRANTED_ROLE, ACCESS_DENIED
  // BAD_ARGUMENTS, CANNOT_COMPILE_REGEXP, the CANNOT_PARSE_* codes, DUPLICATE_COLUMN, ILLEGAL_COLUMN, the AST codes,
  // THERE_IS_NO_COLUMN, SYNTAX_ERROR, INCORRECT_DATA, TYPE_MISMATCH, VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  ...[36, 427, 6, 25, 26, 38, 41, 72, 441, 675, 676, 27, 376, 15, 44, 37, 123, 8, 167, 168, 223, 62, 117, 53, 321].map((c) => [c, 400] as const),
  // UNKNOWN_TABLE, _FUNCTION, _IDENTIFIER, _TYPE, _STORAGE, _DATABASE, _SETTING, _DIRECTION_OF_SORTING,
  // _AGGREGATE_FUNCTION, _FORMAT, _DATABASE_ENGINE, _TYPE_OF_QUERY, _ROLE
  ...[60, 46, 47, 50, 56, 81, 115, 152, 63, 73, 336, 78, 511].map((c) => [c, 404] as const),
  [229, 413], // QUERY_IS_TOO_LARGE
  [48, 501], // NOT_IMPLEMENTED
  ...[209, 76, 439].map((c) => [c, 503] as const), // SOCKET_TIMEOUT, CANNOT_OPEN_FILE, CANNOT_SCHEDULE_TASK
  [381, 411], // HTTP_LENGTH_REQUIRED
  [159, 408], // TIMEOUT_EXCEEDED
  [779, 415], // UNSUPPORTED_MEDIA_TYPE
]);

class EngineError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** A server's exception text for an engine error message (which already reads `Code: N. DB::Exception: ...`). */
function asEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const m = /^Code: (\d+)\. /.exec(message);
  if (m) return new EngineError(Number(m[1]), message);
  return new EngineError(1001, `Code: 1001. DB::Exception: ${message}. (STD_EXCEPTION)`);
}

function loadEngine(): { Session: new (dir: string) => ChdbSession; native: Native } {
  // The addon is chdb's own (same module instance as `require('chdb')` loads); its loader is not exported.
  const root = path.dirname(require.resolve('chdb'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Session } = require('chdb') as { Session: new (dir: string) => ChdbSession };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const native = (require(path.join(root, 'dist', 'loader.js')) as { loadNative(): Native }).loadNative();
  return { Session, native };
}

const sqlString = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The output format a statement names itself (`... FORMAT X` at its end), if any. */
function statedFormat(sql: string): string | undefined {
  // An INSERT's FORMAT names its input; its answer is empty.
  if (/^\s*INSERT\b/i.test(sql)) return undefined;
  return /\bFORMAT\s+(\w+)\s*;?\s*$/i.exec(sql)?.[1];
}

/**
 * Where a second statement begins (index), or -1. A server parses one statement per request and
 * refuses a second with 62 "Multi-statements are not allowed"; the engine library runs them all, so
 * without this check a request a server refuses (two statements sent as one command) passes here.
 * Quoted text and comments are skipped; a trailing `;` (with only blanks or comments after it) is one
 * statement. An INSERT's data (after its FORMAT or VALUES) is not SQL and is not scanned.
 */
export function secondStatementAt(sql: string): number {
  const insert = /^\s*INSERT\b/i.test(sql);
  let ended = false;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      if (ended) return i;
      // ClickHouse quoting: a backslash escapes the next character, a doubled quote is one quote.
      for (i++; i < sql.length; i++) {
        if (sql[i] === '\\') i++;
        else if (sql[i] === c && sql[i + 1] === c) i++;
        else if (sql[i] === c) break;
      }
    } else if (sql.startsWith('--', i)) {
      const eol = sql.indexOf('\n', i);
      i = eol < 0 ? sql.length : eol;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === ';') {
      ended = true;
    } else if (/\s/.test(c)) {
      continue;
    } else if (ended) {
      return i;
    } else if (insert && !/\w/.test(sql[i - 1] ?? '') && /(FORMAT|VALUES)\b/iy.test(sql.slice(i, i + 7))) {
      return -1;
    }
  }
  return -1;
}

function contentType(format: string): string {
  if (/^JSON|^Pretty.*JSON|^NDJSON/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^(TabSeparated|TSV)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8; header=absent';
  return 'text/plain; charset=UTF-8';
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase();
  const source: NodeJS.ReadableStream =
    encoding === 'gzip' ? req.pipe(zlib.createGunzip())
      : encoding === 'deflate' ? req.pipe(zlib.createInflate())
        : encoding === 'br' ? req.pipe(zlib.createBrotliDecompress())
          : req;
  if (encoding && !['gzip', 'deflate', 'br'].includes(encoding)) {
    return Promise.reject(new EngineError(48, `Code: 48. DB::Exception: Unsupported Content-Encoding ${encoding} (this facade takes gzip, deflate, br). (NOT_IMPLEMENTED)`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    source.on('data', (c: Buffer) => chunks.push(c));
    source.on('end', () => resolve(Buffer.concat(chunks)));
    source.on('error', (err: Error) => reject(new EngineError(354, `Code: 354. DB::Exception: Cannot decompress the request body: ${err.message}. (CANNOT_DECOMPRESS)`)));
    req.on('error', reject);
  });
}

/** Who the request says it is: Basic, X-ClickHouse-User/Key, or user/password parameters. */
function credentials(req: http.IncomingMessage, url: URL): { user: string; password: string } {
  const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (basic) {
    const text = Buffer.from(basic, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    return colon < 0 ? { user: text, password: '' } : { user: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  const headerUser = req.headers['x-clickhouse-user'];
  if (typeof headerUser === 'string') return { user: headerUser, password: String(req.headers['x-clickhouse-key'] ?? '') };
  return { user: url.searchParams.get('user') ?? 'default', password: url.searchParams.get('password') ?? '' };
}

export async function startClickHouseHttp(opts: ClickHouseHttpOptions): Promise<ClickHouseHttp> {
  const { Session, native } = loadEngine();
  const dir = path.resolve(opts.dataDir);
  mkdirSync(dir, { recursive: true });
  const lanes: Lane[] = Array.from({ length: opts.lanes ?? 4 }, () => ({ session: new Session(dir), settings: new Map(), database: 'default', busy: false }));
  const waiting: ((lane: Lane) => void)[] = [];
  const sessions = new Map<string, { lane: Lane; timer: NodeJS.Timeout }>();
  const running = new Set<string>();
  const user = opts.user ?? 'default';
  const password = opts.password ?? '';

  // libchdb's query parameters are process-wide state: statements with parameters take turns.
  let paramTurn: Promise<unknown> = Promise.resolve();
  const run = (lane: Lane, sql: string, format: string, params?: Record<string, string>): Promise<RawResult> => {
    if (!params || Object.keys(params).length === 0) return native.QueryAsyncConnection(lane.session.connection, sql, format);
    const result = paramTurn.then(() => native.QueryAsyncConnection(lane.session.connection, sql, format, params));
    paramTurn = result.catch(() => undefined);
    return result;
  };

  const [{ version, timezone }] = JSON.parse(
    Buffer.from((await native.QueryAsyncConnection(lanes[0].session.connection, 'SELECT version() AS version, timezone() AS timezone', 'JSON')).bytes).toString(),
  ).data as { version: string; timezone: string }[];

  const takeLane = (): Promise<Lane> => {
    const free = lanes.find((l) => !l.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const giveLane = (lane: Lane) => {
    const next = waiting.shift();
    if (next) next(lane);
    else lane.busy = false;
  };

  /** The lane of a session_id, made on first use and closed after `timeoutS` idle. */
  const sessionLane = (id: string, timeoutS: number): Lane => {
    let s = sessions.get(id);
    if (!s) {
      s = { lane: { session: new Session(dir), settings: new Map(), database: 'default', busy: false }, timer: setTimeout(() => undefined, 0) };
      sessions.set(id, s);
    }
    if (s.lane.busy) throw new EngineError(373, `Code: 373. DB::Exception: Session ${id} is locked by a concurrent client. (SESSION_IS_LOCKED)`);
    clearTimeout(s.timer);
    const entry = s;
    entry.timer = setTimeout(() => {
      if (entry.lane.busy) return;
      sessions.delete(id);
      entry.lane.session.close();
    }, timeoutS * 1000);
    entry.timer.unref();
    entry.lane.busy = true;
    return entry.lane;
  };

  /** Bring the lane to the request's settings and database (only what differs is sent). */
  const prepare = async (lane: Lane, settings: Map<string, string>, database: string) => {
    const set: string[] = [];
    for (const [k, v] of settings) if (lane.settings.get(k) !== v) set.push(`${k} = ${sqlString(v)}`);
    for (const k of lane.settings.keys()) if (!settings.has(k)) set.push(`${k} = DEFAULT`);
    if (set.length) {
      // A refused SET may have applied part of its list: remember every key, so the next request resets what it does not want.
      for (const [k, v] of settings) lane.settings.set(k, v);
      await run(lane, `SET ${set.join(', ')}`, 'TabSeparated');
      lane.settings = new Map(settings);
    }
    if (lane.database !== database) {
      await run(lane, `USE ${database}`, 'TabSeparated');
      lane.database = database;
    }
  };

  const answerError = (res: http.ServerResponse, err: EngineError, queryId?: string) => {
    const text = `${err.message.replace(/\s+$/, '')}${/\(version [^)]+\)$/.test(err.message) ? '' : ` (version ${version})`}\n`;
    if (res.headersSent) return void res.end();
    res.writeHead(STATUS_BY_CODE.get(err.code) ?? 500, {
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Exception-Code': String(err.code),
      'X-ClickHouse-Server-Display-Name': 'tally-test-clickhouse-http',
      ...(queryId ? { 'X-ClickHouse-Query-Id': queryId } : {}),
    });
    res.end(text);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const q = url.searchParams;
    if ((req.method === 'GET' || req.method === 'HEAD') && (url.pathname === '/ping' || url.pathname === '/replicas_status' || (url.pathname === '/' && !q.has('query')))) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' });
      return void res.end('Ok.\n');
    }
    if (url.pathname !== '/' || (req.method !== 'GET' && req.method !== 'POST')) {
      return answerError(res, new EngineError(1001, `Code: 1001. DB::Exception: ${req.method} ${url.pathname}: this facade serves POST / and GET /, /ping only. (STD_EXCEPTION)`));
    }
    const who = credentials(req, url);
    if (who.user !== user || who.password !== password) {
      req.resume();
      return answerError(res, new EngineError(516, `Code: 516. DB::Exception: ${who.user}: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)`));
    }
    if (/^multipart\//i.test(req.headers['content-type'] ?? '')) {
      req.resume();
      return answerError(res, new EngineError(48, 'Code: 48. DB::Exception: multipart query parameters are not supported by this facade. (NOT_IMPLEMENTED)'));
    }
    const queryId = q.get('query_id') || randomUUID();
    if (running.has(queryId)) {
      req.resume();
      return answerError(res, new EngineError(216, `Code: 216. DB::Exception: Query with id = ${queryId} is already running. (QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING)`), queryId);
    }
    running.add(queryId);
    let lane: Lane | null = null;
    try {
      const body = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
      const head = q.get('query') ?? '';
      const sql = head && body.length ? `${head}\n${body.toString('utf8')}` : head || body.toString('utf8');
      if (!sql.trim()) throw new EngineError(62, 'Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)');
      const second = secondStatementAt(sql);
      if (second >= 0) {
        throw new EngineError(62, `Code: 62. DB::Exception: Syntax error (Multi-statements are not allowed): failed at position ${second + 1}. (SYNTAX_ERROR)`);
      }
      const database = q.get('database') || 'default';
      if (!IDENT.test(database)) throw new EngineError(81, `Code: 81. DB::Exception: Database ${database} does not exist. (UNKNOWN_DATABASE)`);
      const params: Record<string, string> = {};
      const settings = new Map<string, string>();
      for (const [k, v] of q) {
        if (k.startsWith('param_')) params[k.slice('param_'.length)] = v;
        else if (!NOT_SETTINGS.has(k) && !HTTP_SETTINGS.has(k)) {
          if (!IDENT.test(k)) throw new EngineError(115, `Code: 115. DB::Exception: Unknown setting '${k}'. (UNKNOWN_SETTING)`);
          settings.set(k, v);
        }
      }
      const format = statedFormat(sql) ?? q.get('default_format') ?? 'TabSeparated';
      const sessionId = q.get('session_id');
      lane = sessionId ? sessionLane(sessionId, Number(q.get('session_timeout') ?? 60)) : await takeLane();
      await prepare(lane, settings, database);
      const isInsert = /^\s*INSERT\b/i.test(head || sql);
      // An INSERT with no rows stores nothing and succeeds, as on a server (the engine's inline form refuses it).
      const noRows = isInsert && head !== '' && body.toString('utf8').trim() === '';
      const result: RawResult = noRows ? { bytes: new Uint8Array(), elapsed: 0, rowsRead: 0, bytesRead: 0 } : await run(lane, sql, format, params);
      const written = isInsert ? body.toString('utf8').split('\n').filter((l) => l.trim() !== '').length : 0;
      const summary = {
        read_rows: String(result.rowsRead), read_bytes: String(result.bytesRead),
        written_rows: String(written), written_bytes: String(isInsert ? body.length : 0),
        total_rows_to_read: '0', result_rows: String(isInsert ? written : result.rowsRead), result_bytes: String(result.bytesRead),
        elapsed_ns: String(Math.round(result.elapsed * 1e9)),
      };
      let out: Buffer = Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength);
      const headers: http.OutgoingHttpHeaders = {
        'Content-Type': contentType(format),
        'X-ClickHouse-Server-Display-Name': 'tally-test-clickhouse-http',
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Format': format,
        'X-ClickHouse-Timezone': timezone,
        'X-ClickHouse-Summary': JSON.stringify(summary),
      };
      const accepts = String(req.headers['accept-encoding'] ?? '').toLowerCase();
      const encoding = q.get('enable_http_compression') === '1' ? ['gzip', 'deflate', 'br'].find((e) => accepts.includes(e)) : undefined;
      if (encoding) {
        out = encoding === 'gzip' ? zlib.gzipSync(out) : encoding === 'deflate' ? zlib.deflateSync(out) : zlib.brotliCompressSync(out);
        headers['Content-Encoding'] = encoding;
      }
      res.writeHead(200, headers);
      res.end(out);
    } catch (err) {
      answerError(res, asEngineError(err), queryId);
    } finally {
      running.delete(queryId);
      if (lane) {
        if (lanes.includes(lane)) giveLane(lane);
        else lane.busy = false;
      }
    }
  };

  const server = http.createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 10_000; // a server's keep_alive_timeout; the client's idle sockets expire before it
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          for (const l of lanes) l.session.close();
          for (const s of sessions.values()) s.lane.session.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/**
 * The launcher: `node <bundle> --data DIR [--port N] [--user U --password P] [--lanes N]`. Prints
 * `listening <port>` once it accepts requests; SIGTERM closes it.
 */
async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const dataDir = arg('data');
  if (!dataDir) throw new Error('--data DIR is required');
  const served = await startClickHouseHttp({
    dataDir, port: Number(arg('port') ?? 8123), user: arg('user'), password: arg('password'), lanes: arg('lanes') ? Number(arg('lanes')) : undefined,
  });
  process.stdout.write(`listening ${served.port}\n`);
  process.on('SIGTERM', () => void served.close().then(() => process.exit(0)));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: Error) => {
    process.stderr.write(`clickhouse-http: ${err.message}\n`);
    process.exit(1);
  });
}
