import { PER_CALL_DEFAULTS } from '../../clickhouse/store';
import { startTestService, type TestService } from '../support/harness';

/**
 * chdb/connection applies a call's settings as session-wide SETs; the store must keep one call's
 * settings from governing the next (clickhouse/store.ts PER_CALL_DEFAULTS).
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const current = async () => {
  const [row] = await svc.running.ctx.store.query<Record<string, string>>(
    `SELECT ${Object.keys(PER_CALL_DEFAULTS).map((k) => `toString(getSetting('${k}')) AS ${k}`).join(', ')}`,
  );
  return row;
};

test('a setting given to one call is not in force for the next', async () => {
  const store = svc.running.ctx.store;
  const before = await current();
  await store.command('SELECT 1', {}, { max_threads: 1, min_insert_block_size_rows: '5', insert_deduplication_token: 'feed:1:2' });
  expect(await current()).toEqual(before);
  expect(before).toMatchObject({ min_insert_block_size_rows: '1048449', insert_deduplication_token: '' });
});

test('the defaults the store restores are the engine\'s own', async () => {
  const rows = await svc.running.ctx.store.query<{ name: string; default: string }>(
    'SELECT name, default FROM system.settings WHERE name IN {names:Array(String)} ORDER BY name',
    { names: Object.keys(PER_CALL_DEFAULTS) },
  );
  const engine = Object.fromEntries(rows.map((r) => [r.name, r.default.startsWith('auto') ? '0' : r.default]));
  const ours = Object.fromEntries(Object.entries(PER_CALL_DEFAULTS).map(([k, v]) => [k, String(v)]));
  expect(engine).toEqual(ours);
});

test('a per-call setting without a default is refused, not leaked', async () => {
  await expect(svc.running.ctx.store.query('SELECT 1', {}, { join_use_nulls: 1 })).rejects.toThrow(/join_use_nulls .* PER_CALL_DEFAULTS/);
});
