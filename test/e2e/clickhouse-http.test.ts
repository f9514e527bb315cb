import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClickHouseError, createClient, type ClickHouseClient } from '@clickhouse/client';
import { startClickHouseHttpChild, type ClickHouseHttpChild } from '../support/clickhouse-http-launch';

/**
 * The server-mode test's ClickHouse (test/support/clickhouse-http.ts) speaks what @clickhouse/client
 * sends and reads: values bound as a server binds them, settings per request, auth, compression,
 * errors as ClickHouseError with the engine's code, statements from one client in parallel.
 */
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-ch-http-'));
let ch: ClickHouseHttpChild;
let client: ClickHouseClient;

beforeAll(async () => {
  ch = await startClickHouseHttpChild({ dataDir, user: 'tally', password: 'pw' });
  client = createClient({ url: ch.url, username: 'tally', password: 'pw', compression: { response: true, request: true } });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await ch?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const hostile = "it's a \\ back\tslash\nnew é 🎉 {x:String} ' OR 1=1 --";

test('parameters round-trip through the engine binder: strings, arrays, maps, nullable, DateTime64', async () => {
  const rs = await client.query({
    query: "SELECT {s:String} AS s, {a:Array(String)} AS a, {n:Nullable(String)} AS n, {d:DateTime64(3, 'UTC')} AS d, {m:Map(String, String)} AS m",
    query_params: { s: hostile, a: [hostile, 'x'], n: null, d: '2026-01-02 03:04:05.678', m: { "k'": hostile } }, format: 'JSONEachRow',
  });
  expect(await rs.json()).toEqual([{ s: hostile, a: [hostile, 'x'], n: null, d: '2026-01-02 03:04:05.678', m: { "k'": hostile } }]);
});

test('inserts (query in the URL, rows in the gzip body) and reads back by a bound value', async () => {
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS fx' });
  await client.command({ query: 'CREATE TABLE IF NOT EXISTS fx.t (s String, d DateTime64(3)) ENGINE = MergeTree ORDER BY s' });
  await client.insert({ table: 'fx.t', values: [{ s: hostile, d: '2026-01-02 03:04:05.678' }, { s: 'other', d: '2026-01-02 00:00:00.000' }], format: 'JSONEachRow' });
  const back = await (await client.query({ query: 'SELECT s, d FROM fx.t WHERE s = {s:String}', query_params: { s: hostile }, format: 'JSONEachRow' })).json();
  expect(back).toEqual([{ s: hostile, d: '2026-01-02 03:04:05.678' }]);
});

test('errors are ClickHouseErrors with the engine code; a wrong password is 516', async () => {
  const err = await client.query({ query: 'SELECT * FROM fx.nope', format: 'JSONEachRow' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ClickHouseError);
  expect((err as ClickHouseError).code).toBe('60');
  const bad = createClient({ url: ch.url, username: 'tally', password: 'wrong', log: { level: 127 as never } });
  const refused = await bad.query({ query: 'SELECT 1' }).catch((e: unknown) => e);
  await bad.close();
  expect((refused as ClickHouseError).code).toBe('516');
});

test('error statuses are a server\'s (exceptionCodeToHTTPStatus): 403 for a refused login, 404 for an unknown table, 400 for a syntax error', async () => {
  const status = async (query: string, auth = 'tally:pw') => {
    const res = await fetch(`${ch.url}/?query=${encodeURIComponent(query)}`, { headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } });
    await res.text();
    return [res.status, res.headers.get('x-clickhouse-exception-code')];
  };
  expect(await status('SELECT 1', 'tally:wrong')).toEqual([403, '516']);
  expect(await status('SELECT * FROM fx.nope')).toEqual([404, '60']);
  expect(await status('SELEC 1')).toEqual([400, '62']);
});

test('settings apply to their request only; statements without parameters run in parallel', async () => {
  const setting = (s?: Record<string, number>) => client.query({ query: "SELECT getSetting('max_threads') AS t", format: 'JSONEachRow', clickhouse_settings: s }).then((r) => r.json<{ t: number }>());
  expect(await setting({ max_threads: 3 })).toEqual([{ t: 3 }]);
  expect((await setting())[0].t).not.toBe(3);
  const started = Date.now();
  await Promise.all([1, 2, 3].map(() => client.query({ query: 'SELECT sleep(1)' }).then((r) => r.text())));
  expect(Date.now() - started).toBeLessThan(2500);
});

test('one statement per request, as a server parses it: a second is refused with 62, a trailing ; or a quoted one is not', async () => {
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS fx; -- a trailing ; and a comment end one statement\n' });
  const err = await client.command({ query: 'CREATE TABLE IF NOT EXISTS fx.two (a UInt8) ENGINE = Memory; DROP TABLE fx.two' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ClickHouseError);
  expect((err as ClickHouseError).code).toBe('62');
  expect((err as Error).message).toContain('Multi-statements are not allowed');
  // Nothing of the refused request ran (the engine alone would have created and dropped the table).
  const tables = await (await client.query({ query: "SELECT name FROM system.tables WHERE database = 'fx' AND name = 'two'", format: 'JSONEachRow' })).json();
  expect(tables).toEqual([]);
  const one = await client.query({ query: "SELECT ';' AS s, {p:String} AS p", query_params: { p: 'a;b' }, format: 'JSONEachRow' });
  expect(await one.json()).toEqual([{ s: ';', p: 'a;b' }]);
});
