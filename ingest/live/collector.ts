import { rollupFeeder, type RollupFeeder, type WriteHint } from '../../clickhouse/feeder';
import type { Store } from '../../clickhouse/store';
import { nowMs } from '../../core/clock';
import { AppError } from '../../core/errors';
import { logger } from '../../core/logger';
import type { RedisHandle } from '../../infra/redis';
import type { Repos } from '../../model/repos';
import { geoLookup, type GeoLookup } from '../enrich/geo';
import { enrichEvent, EVENT_COLUMNS, type EnrichedEvent } from '../event';
import { hash64 } from '../hash';
import { DurableBatcher } from './batcher';
import { firstPartyToken, identify, type Identity } from './identity';
import { randomHex } from './random';
import type { EventPayload } from './payload';
import { SaltStore } from './salts';
import { LiveSessions } from './sessions';
import { findSession, sessionize, type Sessionable, type SessionizedBatch } from './sessionize';
import { SiteDirectory, type LiveSite } from './sites';
import type { DropReason } from './exclusions';
import { IngestStats } from './stats';
import { DAY_MS } from '../../core/time';

const keepsCookie = (live: LiveSite) => live.site.session_strategy === 'first_party_cookie';

/**
 * The first-party token an answer carries, worked out once per request: when any of the sites keeps
 * a cookie, the token the browser sent (if valid) or a new one for a browser that sent none;
 * otherwise none. Every answer of a known site carries it, stored or dropped (a stored event's and a
 * real-ids answer's come from identify(), which uses the same rule): without it the tracker takes the
 * site for one that keeps no cookie, deletes it, and the next page counts a new visitor. With several
 * domains every cookie site uses this one token (the tracker keeps one cookie).
 */
function answerToken(known: readonly LiveSite[], payload: EventPayload, client: ClientInfo): string | undefined {
  return known.some(keepsCookie) ? firstPartyToken(payload.visitor, client.fromBrowser) : undefined;
}

const withToken = (answer: Promise<CollectResult>, token: string | undefined): Promise<CollectResult> =>
  token ? answer.then((ids) => ({ ...ids, visitor: token })) : answer;

/**
 * Live collection, from a parsed payload to a committed row: find the site(s), enrich, apply the
 * site's exclusions, identify the visitor per the site's strategy, then hand the event to the
 * durable batcher, which sessionises each batch and inserts it in one statement. The answer carries
 * the visitor and session ids (the tracker exposes them as tally.ids() for checkout attribution).
 */
export interface IngestDeps {
  store: Store;
  repos: Repos;
  redis: RedisHandle;
  geoipDb?: string;
  /** Events waiting for an insert beyond which new ones are refused with 503 (TALLY_INGEST_MAX_PENDING). */
  maxPending: number;
}

export interface ClientInfo {
  ip: string;
  userAgent: string;
  /** The request carried an Origin header: a browser, which can keep a first-party token. */
  fromBrowser: boolean;
}

export interface CollectResult {
  visitor_id: string;
  session_id: string;
  /** The first-party token the tracker keeps (first_party_cookie sites only). */
  visitor?: string;
}

const MAX_BATCH = 5_000;
const NO_STATES: ReadonlyMap<string, never> = new Map<string, never>();
const isStored = (r: CollectResult | DropReason): r is CollectResult => typeof r !== 'string';

export class Collector {
  readonly stats = new IngestStats();
  private readonly sites: SiteDirectory;
  private readonly salts: SaltStore;
  private readonly sessions: LiveSessions;
  private readonly geo: GeoLookup;
  private readonly batcher: DurableBatcher<Sessionable, CollectResult, SessionizedBatch>;
  /** Inserts go through a connection of their own: not queued behind reports and rollup feeds. */
  private readonly lane: Store;
  private readonly feeder: RollupFeeder;
  /** Wall time of the latest write's two stages: how long an answer without a write waits (asAfterWrite). */
  private lastWriteMs = { sessionize: 2, insert: 10 };
  private readonly decoySecret = randomHex(16);

  constructor(deps: IngestDeps) {
    this.sites = new SiteDirectory(deps.repos);
    this.salts = new SaltStore(deps.redis);
    this.sessions = new LiveSessions(deps.redis);
    this.geo = geoLookup(deps.geoipDb);
    this.lane = deps.store.dedicated('ingest');
    this.feeder = rollupFeeder(deps.store);
    this.batcher = new DurableBatcher(
      { prepare: (items: Sessionable[]) => this.sessionizeBatch(items), commit: (batches: SessionizedBatch[], items: Sessionable[]) => this.insertBatch(batches, items) },
      { maxPending: deps.maxPending, maxBatch: MAX_BATCH },
    );
  }

  /**
   * The per-event path makes as few promises as it can (docs/PERFORMANCE.md, "JavaScript per event"):
   * one domain whose site is cached is the usual case and goes straight to collectFor.
   */
  collect(payload: EventPayload, client: ClientInfo): Promise<CollectResult> {
    this.stats.received++;
    const tsMs = nowMs();
    if (payload.domains.length === 1) {
      const live = this.sites.lookup(payload.domains[0]);
      if (!(live instanceof Promise)) return this.collectOne(live, payload, client, tsMs);
    }
    return this.collectAll(payload, client, tsMs);
  }

  private collectOne(live: LiveSite | null, payload: EventPayload, client: ClientInfo, tsMs: number): Promise<CollectResult> {
    if (live === null) {
      this.stats.dropped.unknown_domain++;
      return this.decoy(payload.domains[0], client, tsMs);
    }
    const stored = this.collectFor(live, payload, client, tsMs);
    return typeof stored === 'string' ? this.answerDropped(live, stored, payload, client, tsMs) : stored;
  }

  /** Several domains (Plausible's roll-up) or a site not cached yet. */
  private async collectAll(payload: EventPayload, client: ClientInfo, tsMs: number): Promise<CollectResult> {
    const sites = await Promise.all(payload.domains.map((d) => this.sites.lookup(d)));
    const known = sites.filter((s): s is LiveSite => s !== null);
    // Each listed domain records its own copy of the event: every unknown one drops a copy.
    this.stats.dropped.unknown_domain += sites.length - known.length;
    if (known.length === 0) return this.decoy(payload.domains[0], client, tsMs);
    const token = answerToken(known, payload, client);
    const p = token === payload.visitor ? payload : { ...payload, visitor: token };
    const results = await Promise.all(known.map((live) => this.collectFor(live, p, client, tsMs)));
    // Ids for tally.ids(): a cookie site's when it stored the event (they follow the token), else any
    // stored; when every site's exclusions dropped it, the first site's answer (a cookie site's first).
    const stored = results.find((r, i): r is CollectResult => isStored(r) && keepsCookie(known[i])) ?? results.find(isStored);
    if (stored) return withToken(Promise.resolve(stored), token);
    // answerDropped gives either answer the token itself (p carries it).
    const first = Math.max(0, known.findIndex(keepsCookie));
    return this.answerDropped(known[first], results[first] as DropReason, p, client, tsMs);
  }

  /**
   * A known site's event its exclusions dropped. A page of the site left out of its figures (an
   * excluded path; an excluded country on a cookie site, whose visitor may pay from elsewhere) answers
   * the visitor's real ids (`unstored`). Anything else answers a decoy with the token: another host's
   * page has no checkout to attribute, and an excluded country on a hashed-id site none either (the
   * visitor id hashes the very address the country came from, so none of its events is stored);
   * mirrors and excluded countries can send floods, which should cost no Redis read each.
   */
  private answerDropped(live: LiveSite, reason: DropReason, p: EventPayload, client: ClientInfo, tsMs: number): Promise<CollectResult> {
    const attributable = reason === 'excluded_path' || (reason === 'excluded_country' && keepsCookie(live));
    if (attributable) return this.unstored(live, p, client, tsMs);
    return withToken(this.decoy(p.domains[0], client, tsMs), answerToken([live], p, client));
  }

  /**
   * The answer for an event of an unknown domain, or of another host than the site's, must not tell a
   * caller whether the domain is a Tally site (PRODUCT.md §3). Real ids are stable for one
   * visitor (same address and browser) through a session and a day, so decoy ids are too: keyed by a
   * process secret, the domain, the client and the UTC day (random ones changed on every send). And a
   * real answer comes after a write, so a decoy waits as long as the latest write took.
   */
  private decoy(domain: string, client: ClientInfo, tsMs: number): Promise<CollectResult> {
    const key = [this.decoySecret, domain, client.ip, client.userAgent, String(Math.floor(tsMs / DAY_MS))];
    return this.asAfterWrite({ visitor_id: hash64('decoy-v', ...key), session_id: hash64('decoy-s', ...key) });
  }

  /** A real answer comes after a write: an answer without one waits as long as the latest write took. */
  private asAfterWrite<T>(answer: T): Promise<T> {
    const wait = this.lastWriteMs.sessionize + this.lastWriteMs.insert;
    return new Promise((resolve) => setTimeout(resolve, wait, answer));
  }

  /**
   * The answer for a known site's event its exclusions dropped: the visitor's real ids, and the session
   * they are in when one is live, read and not written (nothing stored, the session not extended). A
   * page left out of the figures is often where the checkout is (an app under /account/*): decoy ids
   * there made tally.ids() attribute the payment to nobody. Real ids tell nothing a stored event's
   * answer would not. Without a live session the session id is stable for the day, as a decoy's.
   */
  private async unstored(live: LiveSite, p: EventPayload, client: ClientInfo, tsMs: number): Promise<CollectResult> {
    const identity = await this.identityOf(live, p, client, tsMs);
    const states = await this.sessions.load(identity.candidates.map((c) => c.key));
    const going = findSession(identity.candidates, tsMs, NO_STATES, states);
    const first = identity.candidates[0];
    const ids = going
      ? { visitor_id: going.v, session_id: going.s }
      : { visitor_id: first.visitorId, session_id: hash64('unstored-s', this.decoySecret, first.key, String(Math.floor(tsMs / DAY_MS))) };
    return this.asAfterWrite(identity.token ? { ...ids, visitor: identity.token } : ids);
  }

  private identityOf(live: LiveSite, p: EventPayload, client: ClientInfo, tsMs: number): Identity | Promise<Identity> {
    return identify(this.salts, {
      strategy: live.site.session_strategy, siteId: live.site.id, ip: client.ip, userAgent: client.userAgent,
      token: p.visitor, fromBrowser: client.fromBrowser, nowMs: tsMs,
    });
  }

  /** The stored event's answer, or why the site's exclusions dropped it (counted). */
  private collectFor(live: LiveSite, p: EventPayload, client: ClientInfo, tsMs: number): Promise<CollectResult> | DropReason {
    const event = this.enrich(live, p, client, tsMs);
    const dropped = live.exclusions.check(event);
    if (dropped) {
      this.stats.dropped[dropped]++;
      return dropped;
    }
    const identity = this.identityOf(live, p, client, tsMs);
    if (identity instanceof Promise) return identity.then((id) => this.submit(event, id, tsMs));
    return this.submit(event, identity, tsMs);
  }

  private submit(event: EnrichedEvent, identity: Identity, tsMs: number): Promise<CollectResult> {
    return this.batcher.submit({ event, identity, tsMs }).then(undefined, this.countFailure);
  }

  private readonly countFailure = (err: unknown): never => {
    if (err instanceof AppError && err.code === 'overloaded') this.stats.overloaded++;
    else this.stats.failed++;
    throw err;
  };

  private enrich(live: LiveSite, p: EventPayload, client: ClientInfo, tsMs: number): EnrichedEvent {
    return enrichEvent(
      { ts: tsMs, name: p.name, url: p.url, hashMode: p.hashMode, referrer: p.referrer, userAgent: client.userAgent,
        ip: client.ip, link: p.link, valueCents: p.valueCents, props: p.props },
      live.site, this.geo,
    );
  }

  /**
   * Stage one of a batch: load, assign, save session state. The batcher runs one batch's stage one
   * at a time, in arrival order, so a batch always sees the sessions the previous one opened.
   */
  private async sessionizeBatch(items: Sessionable[]): Promise<SessionizedBatch> {
    const started = performance.now();
    const keys = new Set<string>();
    for (const it of items) for (const c of it.identity.candidates) keys.add(c.key);
    const batch = sessionize(items, await this.sessions.load([...keys]));
    await this.sessions.save(batch.dirty);
    this.lastWriteMs.sessionize = performance.now() - started;
    this.stats.sessionizeMs += this.lastWriteMs.sessionize;
    return batch;
  }

  /** Stage two: one insert for every batch sessionised since the last (while the next ones are). */
  private async insertBatch(batches: SessionizedBatch[], items: Sessionable[]): Promise<CollectResult[]> {
    const started = performance.now();
    const rows = batches.length === 1 ? batches[0].rows : batches.flatMap((b) => b.rows);
    const ids = batches.length === 1 ? batches[0].ids : batches.flatMap((b) => b.ids);
    // Positional rows: ClickHouse parses them about a third faster than keyed JSON objects.
    await this.feeder.write(batchHint(items), () => this.lane.client.insert({
      table: this.lane.table('events'), values: rows, format: 'JSONCompactEachRow', columns: [...EVENT_COLUMNS],
    }));
    this.lastWriteMs.insert = performance.now() - started;
    this.stats.insertMs += this.lastWriteMs.insert;
    this.stats.stored += rows.length;
    this.stats.batches++;
    return ids.map((r, i) => {
      const token = items[i].identity.token;
      return token ? { ...r, visitor: token } : r;
    });
  }

  get pending(): number {
    return this.batcher.pending;
  }

  /** Graceful shutdown: refuse new events, write every accepted one. */
  async close(): Promise<void> {
    await this.batcher.close();
    await this.lane.close();
    this.sites.close();
    logger.info({ stats: this.stats.snapshot() }, 'ingest flushed');
  }
}

/** The sites and event times a batch writes: the rollup feeder narrows its next feed to them. */
function batchHint(items: readonly Sessionable[]): WriteHint {
  const sites = new Set<string>();
  let minTs = Infinity;
  let maxTs = -Infinity;
  for (const i of items) {
    sites.add(i.event.site_id);
    if (i.tsMs < minTs) minTs = i.tsMs;
    if (i.tsMs > maxTs) maxTs = i.tsMs;
  }
  return { siteIds: [...sites], minTs, maxTs };
}
