import { monitorEventLoopDelay } from 'node:perf_hooks';
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
  /** Wall time of the batches' two steps, summed: divided by `batches`, what one write costs. */
  sessionizeMs = 0;
  insertMs = 0;
  dropped: Record<Dropped, number> = {
    unknown_domain: 0, hostname_not_allowed: 0, excluded_hostname: 0, excluded_path: 0, excluded_country: 0,
  };

  /** How late the event loop runs callbacks: every answer waits this long at least once. */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    this.loopDelay.enable();
  }

  snapshot() {
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    return {
      received: this.received, stored: this.stored, batches: this.batches, rejected: this.rejected, overloaded: this.overloaded,
      failed: this.failed, dropped: { ...this.dropped },
      write_ms: { sessionize: Math.round(this.sessionizeMs), insert: Math.round(this.insertMs) },
      event_loop_delay_ms: { p50: ms(this.loopDelay.percentile(50)), p99: ms(this.loopDelay.percentile(99)), max: ms(this.loopDelay.max) },
    };
  }
}
