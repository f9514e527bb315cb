import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../core/errors';
import type { AppContext } from '../api/context';
import { clientKey, perMinuteLimiter, spendOrRefuse } from '../api/rate-limit';
import type { FeedCache } from './cache';

/**
 * What a public feed may cost the engine. The feeds need no key and a board's viewer picks its
 * window to the second, so every new `from` misses the memo and runs a whole board of reports (about
 * a second of engine time on a busy site). Without a gate, a handful of anonymous requests held the
 * engine every organisation's reports share for many seconds. So a computation (never a memo hit):
 * - spends one of its client address's per-minute budget (IPv6 per /64), 429 `rate_limited` past it;
 * - takes one of `SLOTS` of this process (one gate per AppContext), waiting in a short line; when the line is full, 503
 *   `overloaded`. The engine runs one parameterised statement at a time per process anyway, so more
 *   slots would add no throughput, only latency for the API's own reports.
 */
const SLOTS = 2;
const LINE = 16;

export class FeedGate {
  private readonly budget: RateLimiterRedis;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  private constructor(app: AppContext) {
    this.budget = perMinuteLimiter(app.redis, 'feed', app.config.publicFeedsPerMinute);
  }

  private static readonly gates = new WeakMap<AppContext, FeedGate>();

  /** One gate per service: boards and cards share the slots. */
  static of(app: AppContext): FeedGate {
    let gate = FeedGate.gates.get(app);
    if (!gate) FeedGate.gates.set(app, (gate = new FeedGate(app)));
    return gate;
  }

  /**
   * A feed's answer for `key`: from the memo when it holds one (free), else computed once the client
   * at `ip` is admitted and a slot is free. The budget is spent before the memo is asked to compute,
   * so a refused address's 429 is never the shared answer other viewers of the same window wait on.
   */
  async serve<T>(cache: FeedCache, key: string, ip: string | undefined, compute: () => Promise<T>): Promise<T> {
    if (!cache.has(key)) await this.admit(ip);
    return cache.get(key, () => this.run(compute));
  }

  /** Spends the client's budget for one computation. */
  private async admit(ip: string | undefined): Promise<void> {
    await spendOrRefuse(this.budget, clientKey(ip), (s) => `Too many new views of public figures from this address; retry in ${s} s.`);
  }

  /** Runs `compute` once a slot is free. */
  async run<T>(compute: () => Promise<T>): Promise<T> {
    await this.slot();
    try {
      return await compute();
    } finally {
      this.release();
    }
  }

  private slot(): Promise<void> {
    if (this.running < SLOTS) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= LINE) {
      return Promise.reject(new AppError(503, 'overloaded', 'Public figures are busy; retry shortly.', undefined, { 'Retry-After': '2' }));
    }
    // The slot passes straight to the next in line: `running` stays counted.
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
