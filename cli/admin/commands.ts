import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import type { AppContext } from '../../api/context';
import { chToIso } from '../../clickhouse/meta';
import { ALL_SCOPES, ROLES, type Scope } from '../../core/domain';
import { invalidRequest, notFound } from '../../core/errors';
import { nowMs } from '../../core/clock';
import { isValidTimeZone } from '../../core/time';
import { parseInstant } from '../../core/instant';
import { oneLine } from '../../core/fields';
import { digitsBetween } from '../../api/paging';
import { currencySchema, hostnameSchema } from '../../api/routes/settings';
import { siteZone } from '../../query/context';
import { purgeRetention } from '../../workers/jobs/retention-purge';

/**
 * Operator commands behind the admin socket (the "dashboard" of the spec: the only place keys are
 * made). Each parses its string arguments with zod and returns the JSON object the CLI prints.
 */
export interface AdminCommand<A extends z.ZodType = z.ZodType> {
  args: A;
  /** `shutdown` is aborted when the server begins to shut down: a long command stops where it safely can. */
  run(ctx: AppContext, args: z.infer<A>, body: IncomingMessage, shutdown: AbortSignal): Promise<object>;
}

/** A required uuid flag; `what` names it in the error (`--site must be a site uuid`). */
// Ids are compared as stored (lower case); the API takes them in any case, so the CLI does too.
export const uuid = (name: string, what = 'uuid') => z.string({ error: `--${name} is required` }).uuid(`--${name} must be a ${what}`).transform((s) => s.toLowerCase());
/** A whole-number flag (digits only); messages are completed with the flag's name (flagError). */
export const wholeNumber = (min: number, max: number) => digitsBetween(min, max, `must be a whole number from ${min} to ${max}`);

const csv = z.string().optional().transform((s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []));

/** A comma list flag that, when given, must name something (a script's unset variable must not widen the key). */
const givenList = (message: string) => z.string().optional().refine((s) => s === undefined || s.split(',').some((x) => x.trim()), message).pipe(csv);

/** --name of an organisation, a site or a key: one rule and one wording for all three. */
const nameFlag = oneLine(z.string({ error: '--name is required' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'));

async function requireOrg(ctx: AppContext, id: string) {
  const org = await ctx.repos.getOrg(id);
  if (!org) throw notFound('organisation');
  return org;
}

export const define = <A extends z.ZodType>(c: AdminCommand<A>) => c as unknown as AdminCommand;

const keyOut = async (ctx: AppContext, orgId: string) => {
  const keys = await ctx.repos.keys.select('org_id = {o:UUID}', { o: orgId }, 'ORDER BY created_at');
  const usage = await ctx.store.query<{ key_id: string; at: string }>(
    `SELECT key_id, max(last_used_at) AS at FROM ${ctx.store.table('api_key_usage')}
     WHERE key_id IN {ids:Array(UUID)} GROUP BY key_id`,
    { ids: keys.map((k) => k.id) },
  );
  const used = new Map(usage.map((u) => [u.key_id, u.at]));
  return keys.map((k) => ({
    id: k.id, name: k.name, user_id: k.user_id, token_hint: k.token_hint, scopes: k.scopes,
    sites: k.all_sites ? null : k.site_ids, expires_at: chToIso(k.expires_at), revoked: !!k.revoked_at,
    revoked_at: chToIso(k.revoked_at), created_at: chToIso(k.created_at), last_used_at: chToIso(used.get(k.id)),
  }));
};

export const COMMANDS: Record<string, AdminCommand> = {
  'org create': define({
    args: z.object({
      name: nameFlag,
      'retention-days': wholeNumber(1, 36500).optional().transform((d) => d ?? 1095),
    }),
    async run(ctx, a) {
      const org = await ctx.repos.createOrg(a.name, a['retention-days']);
      return { id: org.id, name: org.name, retention_days: org.retention_days };
    },
  }),

  'user create': define({
    args: z.object({
      org: uuid('org'),
      email: z.string({ error: '--email is required' }).email('--email must be an email address'),
      role: z.enum(ROLES as [string, ...string[]], { error: '--role must be owner, admin or member' }),
    }),
    async run(ctx, a) {
      await requireOrg(ctx, a.org);
      const u = await ctx.repos.createUser(a.org, a.email, a.role as 'owner');
      return { id: u.id, email: u.email, role: u.role };
    },
  }),

  'user remove': define({
    args: z.object({ org: uuid('org'), user: uuid('user') }),
    async run(ctx, a) {
      if (!(await ctx.repos.removeUser(a.org, a.user))) throw notFound('user');
      return { id: a.user, removed: true };
    },
  }),

  'site create': define({
    args: z.object({
      org: uuid('org'),
      domain: hostnameSchema,
      name: nameFlag.optional(),
      timezone: z.string().refine(isValidTimeZone, '--timezone must be an IANA timezone').optional(),
      currency: currencySchema.optional(),
    }),
    async run(ctx, a) {
      await requireOrg(ctx, a.org);
      const s = await ctx.repos.createSite({ org_id: a.org, ...a, timezone: await siteZone(ctx.store, a.timezone, '--timezone') });
      return { id: s.id, domain: s.domain, name: s.name, timezone: s.timezone, currency: s.currency };
    },
  }),

  'key create': define({
    args: z.object({
      org: uuid('org'),
      user: uuid('user'),
      // Given but empty (a script's unset variable) is refused, like --sites: the key made would not be the one asked for.
      scopes: givenList('--scopes names no scope; leave it out for an analytics:read key')
        // Refusals name the entry: in a list, a typo (`settings:wrte`) is otherwise hard to spot.
        .pipe(z.array(z.enum(ALL_SCOPES as [string, ...string[]], {
          error: (iss) => `--scopes: "${String(iss.input).slice(0, 64)}" is not a scope; it takes ${ALL_SCOPES.join(',')}`,
        }))),
      // Given but empty is refused: it would make the widest key, every site.
      sites: givenList('--sites names no site; leave it out for a key that reads every site')
        .pipe(z.array(z.string().uuid({ error: (iss) => `--sites: "${String(iss.input).slice(0, 64)}" is not a site uuid` }).transform((s) => s.toLowerCase()))),
      'expires-at': z.string().transform((at, ctx) => {
        const ms = parseInstant(at);
        if (typeof ms === 'string') ctx.addIssue({ code: 'custom', message: `--expires-at ${ms}` });
        else if (ms <= nowMs()) ctx.addIssue({ code: 'custom', message: '--expires-at is in the past: the key would never work' });
        return typeof ms === 'string' ? z.NEVER : new Date(ms).toISOString();
      }).optional(),
      name: nameFlag.optional(),
    }),
    async run(ctx, a) {
      await requireOrg(ctx, a.org);
      const own = new Set((await ctx.repos.listSites(a.org)).map((s) => s.id));
      const foreign = a.sites.find((s) => !own.has(s));
      if (foreign) throw invalidRequest(`--sites: ${foreign} is not a site of this organisation`);
      const made = await ctx.repos.createKey({
        org_id: a.org, user_id: a.user, name: a.name, scopes: a.scopes as Scope[], site_ids: a.sites, expires_at: a['expires-at'],
      });
      if (!made) throw invalidRequest('--user is not a member of --org');
      const { row, token } = made;
      return { id: row.id, token, scopes: row.scopes, sites: row.all_sites ? null : row.site_ids, expires_at: chToIso(row.expires_at) };
    },
  }),

  'key revoke': define({
    args: z.object({ key: uuid('key') }),
    async run(ctx, a) {
      const key = await ctx.repos.getKey(a.key);
      if (!key) throw notFound('key');
      await ctx.repos.revokeKey(key);
      return { id: key.id, revoked: true };
    },
  }),

  'key list': define({
    args: z.object({ org: uuid('org') }),
    async run(ctx, a) {
      await requireOrg(ctx, a.org);
      return { keys: await keyOut(ctx, a.org) };
    },
  }),

  // The daily retention purge, now (docs/OPERATIONS.md "Retention purge"); 409 while another runs.
  'retention purge': define({
    args: z.object({ org: uuid('org').optional() }),
    run: (ctx, a) => purgeRetention(ctx, { orgId: a.org }),
  }),
};

/**
 * A command run in-process against `ctx`, validated as the socket validates it (tests and benches):
 * `body` feeds streaming commands; flags left undefined are left out. Throws the command's AppError.
 */
export function runCommand(ctx: AppContext, name: string, args: Record<string, string | undefined>, body?: string | Buffer): Promise<object> {
  const def = COMMANDS[name];
  if (!def) throw new Error(`no admin command ${name}`);
  const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  const stream = new PassThrough();
  stream.end(body ?? '');
  return def.run(ctx, def.args.parse(given), stream as unknown as IncomingMessage, new AbortController().signal);
}

/** Further command sets (events import, seed) register themselves here. */
export function addCommands(more: Record<string, AdminCommand>): void {
  Object.assign(COMMANDS, more);
}
