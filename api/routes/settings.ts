import { z } from 'zod';
import { withLeadingSlash } from '../../core/glob';
import '../openapi'; // extends zod with .openapi() before the schemas below use it
import { SESSION_STRATEGIES, type Site } from '../../core/domain';
import { invalidRequest } from '../../core/errors';
import { isValidTimeZone } from '../../core/time';
import { isCountryCode } from '../../core/countries';
import { asciiHost, isHostname, withinDomain } from '../../core/hostname';
import type { RouteRegistrar } from '../route';
import { siteZone } from '../../query/context';
import { label } from '../../core/fields';

/** A bare hostname, stored lower-case, a Unicode one in its ASCII (punycode) form, as events carry it. */
export const hostnameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform(asciiHost)
  .refine(isHostname, 'must be a bare hostname such as example.com (no scheme, port or path)');

/** Codes ICU knows as currencies (ISO 4217): `XYZ` or a typo would make every payment "another currency". */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
export const currencySchema = z
  .string()
  .transform((c) => c.trim().toUpperCase())
  .refine((c) => CURRENCIES.has(c), 'must be an ISO 4217 currency code such as USD or EUR');

/** Lists are lower-cased (after `fix`: an escape may decode to upper case) and de-duplicated; the limit applies to what remains. */
function list(name: string, max: number, item: z.ZodType<string, string>, fix: (s: string) => string = (s) => s, itemDoc: object = {}) {
  return z
    .array(z.string().trim().min(1, `${name} entries must not be empty`).max(300).openapi({ maxLength: 300, ...itemDoc }))
    .transform((xs) => [...new Set(xs.map((x) => fix(x).toLowerCase()))])
    .pipe(z.array(item).max(max, `at most ${max} entries are allowed`))
    // The document states the limit a client must keep (the spec's Limits); the server counts it after de-duplication.
    .openapi({ maxItems: max, description: `At most ${max} distinct entries (after lower-casing and de-duplication).` });
}

/**
 * Paths are matched decoded (`/café/*`), so a pattern pasted from an address bar (`/caf%C3%A9/*`) is
 * decoded when saved; otherwise it would silently match nothing. Malformed escapes stay as written.
 */
function decodedPath(p: string): string {
  try {
    return withLeadingSlash(decodeURIComponent(p));
  } catch {
    return withLeadingSlash(p);
  }
}

/** The site's own domain included. */
const MAX_ALLOWED_HOSTNAMES = 25;

export const SettingsPatch = z.strictObject({
  name: label(200).optional(),
  domain: hostnameSchema.optional(),
  timezone: z.string().refine(isValidTimeZone, 'unknown IANA timezone').optional(),
  currency: currencySchema.optional(),
  excluded_paths: list('excluded_paths', 50, z.string().max(300), decodedPath).optional(),
  allowed_hostnames: list('allowed_hostnames', MAX_ALLOWED_HOSTNAMES, hostnameSchema).optional(),
  excluded_hostnames: list('excluded_hostnames', 50, hostnameSchema).optional(),
  excluded_countries: list('excluded_countries', 100, z.string().superRefine((c, ctx) => {
    if (!isCountryCode(c)) ctx.addIssue({ code: 'custom', message: `ISO 3166-1 alpha-2 country codes only: "${c.slice(0, 64)}" is not one` });
  }), undefined,
    { pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 country code' }).optional(),
  session_strategy: z.enum(SESSION_STRATEGIES as [string, ...string[]]).optional(),
});

const SettingsOut = z.object({
  name: z.string(), domain: z.string(), timezone: z.string(), currency: z.string(), active: z.boolean(),
  excluded_paths: z.array(z.string()), allowed_hostnames: z.array(z.string()), excluded_hostnames: z.array(z.string()),
  excluded_countries: z.array(z.string()), session_strategy: z.enum(SESSION_STRATEGIES as [string, ...string[]]),
});

export const settingsResponse = (s: Site) => ({
  name: s.name, domain: s.domain, timezone: s.timezone, currency: s.currency, active: s.active,
  excluded_paths: s.excluded_paths, allowed_hostnames: s.allowed_hostnames, excluded_hostnames: s.excluded_hostnames,
  excluded_countries: s.excluded_countries, session_strategy: s.session_strategy,
});

/**
 * Apply a validated patch. The site's own domain is folded into allowed_hostnames on every save and
 * cannot be removed (the 25-entry limit counts it), nor excluded.
 */
export function applySettings(site: Site, patch: z.infer<typeof SettingsPatch>): Site | string {
  const next = { ...site, ...patch } as Site;
  const allowed = [...new Set([next.domain, ...(patch.allowed_hostnames ?? site.allowed_hostnames)])];
  if (allowed.length > MAX_ALLOWED_HOSTNAMES) {
    // A new domain joins the list and the old one stays (its pages may still send events): name what was sent.
    return patch.allowed_hostnames === undefined
      ? `domain: allowed_hostnames would hold ${allowed.length} entries with the new domain added (at most ${MAX_ALLOWED_HOSTNAMES}); send allowed_hostnames without the ones to drop`
      : `allowed_hostnames: at most ${MAX_ALLOWED_HOSTNAMES} entries are allowed, the site domain included`;
  }
  // Excluding the site's own domain would silently drop all its traffic (exclusion wins over allowing).
  // An entry excludes its subdomains too (docs/COLLECTION.md), so a parent of the domain is refused alike.
  const covering = next.excluded_hostnames.find((h) => withinDomain(next.domain, h));
  if ((patch.excluded_hostnames !== undefined || patch.domain !== undefined) && covering !== undefined) {
    return patch.excluded_hostnames === undefined
      ? `domain: "${next.domain}" is excluded by "${covering}" in excluded_hostnames; remove it there first`
      : `excluded_hostnames: "${covering}" excludes the site's own domain "${next.domain}", whose events would all be dropped`;
  }
  return { ...next, allowed_hostnames: allowed };
}

/** The refusal of a domain another site holds (sites and settings routes). */
export const DOMAIN_TAKEN = 'conflict: another site (of any organisation) holds the domain; domains are global';

export function settingsRoutes(r: RouteRegistrar, out: typeof settingsResponse): void {
  r.route({
    method: 'get', path: '/sites/{siteId}/settings', summary: 'Read site settings', tag: 'settings', scope: 'settings:read',
    response: SettingsOut,
    async handler({ site }) {
      return { data: out(site) };
    },
  });

  r.route({
    method: 'patch', path: '/sites/{siteId}/settings', summary: 'Change site settings', tag: 'settings', scope: 'settings:write',
    refusals: { 409: DOMAIN_TAKEN },
    body: SettingsPatch, response: SettingsOut,
    async handler({ app, site, body: asked }) {
      const body = asked.timezone === undefined ? asked : { ...asked, timezone: await siteZone(app.store, asked.timezone) };
      const edit = () => app.repos.editSite(site.id, (current) => {
        const next = applySettings(current, body);
        if (typeof next === 'string') throw invalidRequest(next);
        return next;
      });
      const saved = body.domain && body.domain !== site.domain ? await app.repos.claimingDomain(site.id, body.domain, edit) : await edit();
      return { data: out(saved) };
    },
  });
}
