import { isoToCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import { logger } from '../core/logger';

/**
 * Records each key's last successful use without touching the request path: uses collect in memory
 * and one insert a second writes the newest per key (api_key_usage keeps the max).
 */
export class KeyUsageRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout;

  constructor(private readonly store: Store, intervalMs = 1000) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  touch(keyId: string): void {
    this.pending.set(keyId, Date.now());
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const rows = [...this.pending].map(([key_id, at]) => ({ key_id, last_used_at: isoToCh(new Date(at)) }));
    this.pending = new Map();
    await this.store.insert('api_key_usage', rows).catch((err: Error) => logger.warn({ err: err.message }, 'key usage write failed'));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
