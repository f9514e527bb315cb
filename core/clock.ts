/**
 * The one source of "now". Tests freeze it (setClock) so windows like `today` are deterministic;
 * production code never calls Date.now() directly for report semantics.
 */
let frozen: number | null = null;

export function now(): Date {
  return new Date(frozen ?? Date.now());
}

export function nowMs(): number {
  return frozen ?? Date.now();
}

/** Freeze the clock at `at` (ISO string or Date); pass null to unfreeze. */
export function setClock(at: string | Date | null): void {
  frozen = at === null ? null : new Date(at).getTime();
}
