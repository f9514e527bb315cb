import os from 'node:os';
import path from 'node:path';
import { openStore, type Store, type StoreOptions } from '../../clickhouse/store';

/**
 * The one embedded data directory of this jest worker. TRAP: chDB runs one engine per process, so
 * every store a test process opens (test services, bare stores) must use this directory; suites keep
 * apart by database instead.
 */
export const processDataDir = path.join(os.tmpdir(), `tally-jest-${process.pid}`);

/** A bare store on the process's engine (no service around it). */
export const openTestStore = (database: string, opts: Partial<StoreOptions> = {}): Store =>
  openStore({ database, dataDir: processDataDir, ...opts });
