import type { Store } from '../clickhouse/store';
import type { Config } from '../core/config';
import type { RedisHandle } from '../infra/redis';
import type { SecretBox } from '../infra/secrets';
import type { Repos } from '../model/repos';
import type { Queues } from '../workers/queues';

/** Everything a route, the admin socket or a public page needs, built once at start. */
export interface AppContext {
  config: Config;
  store: Store;
  repos: Repos;
  redis: RedisHandle;
  queues: Queues;
  /** Seals integration credentials at rest. */
  secrets: SecretBox;
  /** Hooks run on graceful shutdown before storage closes (ingest flushes here). */
  onShutdown: (() => Promise<void>)[];
}
