import type { DropReason } from './exclusions';

/**
 * What happened to collection requests since start: shown by the admin command `events stats`.
 * Unknown domains are answered 202 like any other (no site enumeration) and only counted here.
 */
export type Dropped = DropReason | 'unknown_domain';

export class IngestStats {
  received = 0;
  stored = 0;
  /** ClickHouse inserts made: fewer than `stored` whenever concurrent events shared one. */
  batches = 0;
  rejected = 0;
  overloaded = 0;
  failed = 0;
  dropped: Record<Dropped, number> = {
    unknown_domain: 0, hostname_not_allowed: 0, excluded_hostname: 0, excluded_path: 0, excluded_country: 0,
  };

  snapshot() {
    return {
      received: this.received, stored: this.stored, batches: this.batches, rejected: this.rejected, overloaded: this.overloaded,
      failed: this.failed, dropped: { ...this.dropped },
    };
  }
}
