import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key tokens: `tly_` + 30 random base62 characters + a 6-character base62 CRC32 of the first
 * 34 characters. The fixed prefix lets secret scanners find leaked keys; the checksum lets them (and
 * us) reject typos and garbage without touching storage. Only the SHA-256 of a token is stored.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const TOKEN_PREFIX = 'tly_';
const TOKEN_RE = /^tly_[0-9A-Za-z]{36}$/;

function base62(n: number, width: number): string {
  let s = '';
  for (let v = n; v > 0; v = Math.floor(v / 62)) s = ALPHABET[v % 62] + s;
  return s.padStart(width, '0');
}

function randomBase62(len: number): string {
  let out = '';
  while (out.length < len) {
    for (const b of randomBytes(len * 2)) {
      if (b < 248 && out.length < len) out += ALPHABET[b % 62]; // 248 = 4*62: no modulo bias
    }
  }
  return out;
}

const checksum = (body: string) => base62(crc32(body), 6);

export function generateToken(): string {
  const body = TOKEN_PREFIX + randomBase62(30);
  return body + checksum(body);
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedToken(token: string): boolean {
  return TOKEN_RE.test(token) && checksum(token.slice(0, 34)) === token.slice(34);
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
