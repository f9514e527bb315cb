/** IANA zone check without a dependency: Intl throws RangeError for an unknown zone. */
export function isValidTimeZone(tz: string): boolean {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * The instants a report window may cover, [1970, 2200): report parameters are checked against them
 * and the importer refuses events outside them, which no report could ever read.
 */
export const REPORTABLE = { fromMs: Date.UTC(1970, 0, 1), toMs: Date.UTC(2200, 0, 1) } as const;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
