import { createHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { DropReason } from './exclusions';

/**
 * What happened to collection requests since start: shown by the admin command `events stats`.
 * Unknown domains are answered 202 like any other (no site enumeration) and only counted here.
 */
export type Dropped = DropReason | 'unknown_domain';

const LOOP_TIMER_MS = 10;

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

  /**
   * How late the event loop runs callbacks: every answer waits this long at least once. The
   * histogram times a timer of LOOP_TIMER_MS, so it holds the period plus the lateness (an idle loop
   * reads about 10 ms); the snapshot reports the lateness alone.
   */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: LOOP_TIMER_MS });

  /**
   * Time from a request's handler to its 202 (µs): the server's share of the latency a client sees
   * (without the kernel's queues and the client's own delays).
   */
  private readonly ack = createHistogram();

  constructor() {
    this.loopDelay.enable();
  }

  recordAck(ms: number): void {
    this.ack.record(Math.max(1, Math.round(ms * 1000)));
  }

  snapshot() {
    const late = (ns: number) => Math.max(0, Math.round(ns / 1e5 - LOOP_TIMER_MS * 10) / 10);
    const us = (v: number) => Math.round(v / 100) / 10;
    return {
      received: this.received, stored: this.stored, batches: this.batches, rejected: this.rejected, overloaded: this.overloaded,
      failed: this.failed, dropped: { ...this.dropped },
      write_ms: { sessionize: Math.round(this.sessionizeMs), insert: Math.round(this.insertMs) },
      event_loop_delay_ms: { p50: late(this.loopDelay.percentile(50)), p99: late(this.loopDelay.percentile(99)), max: late(this.loopDelay.max) },
      ack_ms: this.ack.count === 0 ? null : { count: this.ack.count, p50: us(this.ack.percentile(50)), p99: us(this.ack.percentile(99)), max: us(this.ack.max) },
    };
  }
}
