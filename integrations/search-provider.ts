import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import { AppError, invalidRequest } from '../core/errors';
import { typeError } from '../core/fields';
import { nowMs } from '../core/clock';
import { SEARCH_PROVIDER } from '../query/lower/search';
import { IntegrationRepo } from '../model/integrations';
import type { BackfillRun, Provider } from './provider';
import {
  clearRows, consoleDate, dayTotals, daysWithData, noteIncomplete, readDay, retentionStart, searchClient, shiftDate, type SearchCredentials,
} from './search-console';
import { googleFailure } from './google-errors';

/**
 * Search Console as a provider: connected with a property and the JSON key of a service account the
 * property's owner added as a user (Settings, Users and permissions: "Restricted" is enough). The
 * import reads every day the console still holds that has impressions, newest first, a day per unit
 * (cursor: the last day stored); the refresh job (workers/jobs/search-refresh.ts) keeps the recent,
 * not yet final days current afterwards. A re-sync clears the site's search rows.
 */
const isPrivateKey = (pem: string) => {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
};

/** The key file Google hands out, as an object or as its text; its other fields are accepted and not kept. */
const KeyFile = z.strictObject({
  type: z.literal('service_account', { error: 'must be "service_account" (a service account key file)' }).optional(),
  client_email: z.string(typeError('a string', 'the service account\'s email, from its JSON key file')).max(320, 'allows at most 320 characters')
    .regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, { error: 'must be the service account\'s email (...@....iam.gserviceaccount.com)' }),
  private_key: z.string(typeError('a string', 'the PEM private key from the JSON key file')).max(16_384, 'allows at most 16384 characters')
    .refine(isPrivateKey, { error: 'must be the RSA private key of the JSON key file (-----BEGIN PRIVATE KEY-----...)' }),
  private_key_id: z.string().max(200).optional(),
  project_id: z.string().optional(), client_id: z.string().optional(), auth_uri: z.string().optional(), token_uri: z.string().optional(),
  auth_provider_x509_cert_url: z.string().optional(), client_x509_cert_url: z.string().optional(), universe_domain: z.string().optional(),
}, {
  error: (issue) => (issue.input === undefined
    ? 'is required: the service account\'s JSON key file (object or text)'
    : 'must be the service account\'s JSON key file (object or text)'),
});

const fromText = (v: unknown) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};

const ConnectBody = z.strictObject({
  property: z.string(typeError('a string', 'the Search Console property, "sc-domain:example.com" or "https://www.example.com/"'))
    .max(2048, 'allows at most 2048 characters')
    .regex(/^(sc-domain:[a-z0-9-]+(\.[a-z0-9-]+)+|https?:\/\/[^\s/?#]+\/([^\s?#]*\/)?)$/i, {
      error: 'must be a Search Console property: "sc-domain:example.com" (a domain property) or a URL prefix ending in "/" ("https://www.example.com/")',
    })
    // Google names domain properties in lower case; a URL prefix's path is case-sensitive and kept.
    .transform((p) => (p.toLowerCase().startsWith('sc-domain:') ? p.toLowerCase() : p)),
  service_account: z.preprocess(fromText, KeyFile),
});
type ConnectInput = z.infer<typeof ConnectBody>;

const toCredentials = (input: ConnectInput): SearchCredentials => ({
  property: input.property,
  client_email: input.service_account.client_email,
  private_key: input.service_account.private_key,
  private_key_id: input.service_account.private_key_id,
});

/** The account must read the property (all an import does): refusals are the caller's 400, an outage a 503. */
async function verify(c: SearchCredentials, config: { googleApiUrl?: URL }): Promise<undefined> {
  let level: string | null | undefined;
  try {
    level = (await searchClient(c, config.googleApiUrl).sites.get({ siteUrl: c.property })).data.permissionLevel;
  } catch (err) {
    const failure = googleFailure(err);
    if (failure === 'credentials') throw invalidRequest('service_account: Google refused this key (deleted or disabled key, or not a key of this account).');
    if (failure === 'access') {
      throw invalidRequest(`property: ${c.client_email} may not read ${c.property}; add it as a user of the property in Search Console (Settings, Users and permissions).`);
    }
    throw new AppError(503, 'provider_unavailable', 'Google could not be reached to check the service account; try again shortly.', undefined, { 'Retry-After': '30' });
  }
  if (level === 'siteUnverifiedUser') throw invalidRequest(`property: ${c.property} is not verified in Search Console; verify it first.`);
  return undefined; // the property is the account: another property is another account's data
}

/** Days with data, newest first, from the day before the cursor (or today) back to the console's oldest. */
async function importAll(run: BackfillRun<SearchCredentials>): Promise<boolean> {
  const c = run.credentials;
  const sc = searchClient(c, run.ctx.config.googleApiUrl);
  const today = consoleDate(nowMs());
  const last = run.row.backfill_cursor ? shiftDate(run.row.backfill_cursor, -1) : today;
  const totals = await dayTotals(sc, c.property, retentionStart(today), last);
  // What the console still collects (`partial` in the reports); a resumed run's range stops short of it.
  if (!run.row.backfill_cursor) await noteIncomplete(new IntegrationRepo(run.ctx.store), run.row, totals);
  for (const day of daysWithData(totals)) {
    const done = await readDay(sc, run.ctx.store, run.siteId, c.property, day, totals);
    if (!(await run.progress(day, { days: 1, rows: done.rows, pages: done.requests }, done.write))) return false;
  }
  return true;
}

export const searchConsoleProvider: Provider<ConnectInput, SearchCredentials> = {
  name: SEARCH_PROVIDER,
  label: 'Search Console',
  connectBody: ConnectBody,
  verify,
  account: (input) => input.property,
  credentials: toCredentials,
  webhookSecret: () => undefined,
  counts: ['days', 'rows'],
  importAll,
  purge: (store, siteId) => clearRows(store, siteId),
  permanent: (err) => googleFailure(err) !== 'unavailable',
  describe(err) {
    const failure = googleFailure(err);
    if (failure === 'credentials') return 'Google refused the service account key (deleted or disabled?); connect again with a valid key.';
    if (failure === 'access') return 'The service account may no longer read the property; add it again as a user in Search Console.';
    return `Search Console: ${(err as Error).message}`;
  },
};
