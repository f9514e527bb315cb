import type { Site } from '../../core/domain';
import { compileGlob } from '../../core/glob';
import { withinDomain } from '../../core/hostname';

/**
 * A site's ingest settings compiled once per settings version: allowed hostnames (the site's domain
 * is always among them; an entry also admits its subdomains, so example.com admits www.example.com),
 * excluded hostnames (also with subdomains; exclusion wins), excluded path globs (core/glob, the same
 * meaning as path_pattern filters) and excluded countries. Imports ignore all of this (PRODUCT.md §2).
 */
export type DropReason = 'hostname_not_allowed' | 'excluded_hostname' | 'excluded_path' | 'excluded_country';

export interface Exclusions {
  check(e: { hostname: string; pathname: string; country: string }): DropReason | null;
}

export function compileExclusions(site: Site): Exclusions {
  const allowed = [...new Set([site.domain, ...site.allowed_hostnames].map((h) => h.toLowerCase()))];
  const excluded = site.excluded_hostnames.map((h) => h.toLowerCase());
  // Settings store globs lower-cased (the spec's normalisation), so paths match them case-insensitively.
  const paths = site.excluded_paths.map((g) => compileGlob(g, { ignoreCase: true }));
  const countries = new Set(site.excluded_countries.map((c) => c.toUpperCase()));
  return {
    check(e) {
      if (!allowed.some((h) => withinDomain(e.hostname, h))) return 'hostname_not_allowed';
      if (excluded.some((h) => withinDomain(e.hostname, h))) return 'excluded_hostname';
      if (paths.some((matches) => matches(e.pathname))) return 'excluded_path';
      if (e.country && countries.has(e.country)) return 'excluded_country';
      return null;
    },
  };
}
