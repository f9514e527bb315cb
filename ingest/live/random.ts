import { randomBytes } from 'node:crypto';

/**
 * Random bytes for per-event needs (a new session's tag, a first-party token, decoy ids), taken from
 * a pool filled by crypto.randomBytes: one small randomBytes call costs about 2 µs, a pooled slice
 * about 0.1 µs. Every byte is handed out once, so the values are exactly as unpredictable.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

function take(n: number): [Buffer, number] {
  if (n > POOL_BYTES) return [randomBytes(n), 0];
  if (used + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const at = used;
  used += n;
  return [pool, at];
}

export function randomHex(bytes: number): string {
  const [buf, at] = take(bytes);
  return buf.toString('hex', at, at + bytes);
}

export function randomBase64url(bytes: number): string {
  const [buf, at] = take(bytes);
  return buf.toString('base64url', at, at + bytes);
}
