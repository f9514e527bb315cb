import type { z } from 'zod';
import type { Store } from '../clickhouse/store';
import type { Config } from '../core/config';
import type { IntegrationRow } from '../model/integrations';
import type { WorkerContext } from '../workers/types';

/**
 * What an integration provider is to the rest of Tally: how it is connected (the body, a live check
 * of the credentials), what is sealed, how its full import runs and what a re-sync clears. The
 * connection use cases (connections.ts) and the backfill driver (backfill.ts) know only this; a new
 * provider is one file implementing it, listed in providers.ts.
 */
export interface Provider<Input = unknown, Credentials = unknown> {
  name: string;
  /** The provider's name in messages ("Stripe", "Search Console"). */
  label: string;
  /** The body of PUT /sites/{id}/integrations/{provider}: unknown fields are refused. */
  connectBody: z.ZodType<Input>;
  /**
   * The credentials work for what the import does: a refusal is the caller's 400, an outage a 503.
   * Run on connect (the body's credentials) and before a re-sync clears anything (the stored ones).
   * Resolves to a witness of the account when it can name one: an id of its data (Stripe: its newest
   * charge), which `holds` then looks for among what the site stored.
   */
  verify(credentials: Credentials, config: Config): Promise<string | undefined>;
  /**
   * Whether the site's stored data holds `witness`: then a re-key whose `account` reads differently
   * (a rolled Stripe key shows other last characters) reaches the same account, and nothing is
   * cleared. Without it, another `account` is another account's data.
   */
  holds?(store: Store, siteId: string, witness: string): Promise<boolean>;
  /** Which account the connection reads, as GET /integrations shows it: never a secret. */
  account(input: Input): string;
  /** What is sealed into `credentials` (never read back through the API). */
  credentials(input: Input): Credentials;
  /** The webhook signing secret, for providers that send webhooks. */
  webhookSecret(input: Input): string | undefined;
  /** The names of the backfill's counts on GET /integrations (`pages` is always there too). */
  counts: readonly string[];
  /** Import from the stored cursor on; false when the generation was replaced meanwhile. */
  importAll(run: BackfillRun<Credentials>): Promise<boolean>;
  /** What a re-sync clears before the full import; it has finished when the promise resolves. */
  purge(store: Store, siteId: string): Promise<void>;
  /** The provider will refuse every retry the same way (revoked credentials): fail at once. */
  permanent(err: unknown): boolean;
  /** The error as GET /integrations shows it. */
  describe(err: unknown): string;
}

/** One run of a backfill job, as the provider's import sees it. */
export interface BackfillRun<Credentials> {
  siteId: string;
  /** The connection as the run started: `backfill_cursor` is where to go on. */
  row: IntegrationRow;
  credentials: Credentials;
  ctx: WorkerContext;
  /**
   * Store a unit of work (`write`) and record it: the cursor a restart goes on from, and what it
   * added to the counts (one page is counted per call). The write runs in the site's turn and only
   * while this generation is current, so a unit read before a re-sync or a re-key to another account
   * is never written after their purge. False when the generation was replaced: stop.
   */
  progress(cursor: string, added: Record<string, number>, write: () => Promise<void>): Promise<boolean>;
}
