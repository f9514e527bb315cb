import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);

let lastVersion = 0;
/**
 * Monotonic row version for ReplacingMergeTree metadata tables: microseconds since epoch, bumped
 * so two writes in the same process never share a version (the later write must win).
 */
export function nextVersion(): number {
  const v = Date.now() * 1000;
  lastVersion = v > lastVersion ? v : lastVersion + 1;
  return lastVersion;
}
