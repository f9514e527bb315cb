import { crc32 } from 'node:zlib';
import { generateToken, hashToken, hashesEqual, isWellFormedToken, TOKEN_PREFIX } from '../../model/keys';
import { expandScopes } from '../../model/repos';
import { ALL_SCOPES, DEFAULT_SCOPES } from '../../core/domain';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const base62 = (n: number) => {
  let s = '';
  for (let v = n; v > 0; v = Math.floor(v / 62)) s = ALPHABET[v % 62] + s;
  return s.padStart(6, '0');
};

describe('API key tokens', () => {
  test('tly_ + 30 random base62 + the 6-character base62 CRC32 of the first 34 characters', () => {
    for (let i = 0; i < 200; i++) {
      const t = generateToken();
      expect(t).toMatch(/^tly_[0-9A-Za-z]{36}$/);
      expect(t.startsWith(TOKEN_PREFIX)).toBe(true);
      expect(t.slice(34)).toBe(base62(crc32(t.slice(0, 34))));
      expect(isWellFormedToken(t)).toBe(true);
    }
  });

  test('tokens do not repeat and use the whole alphabet', () => {
    const tokens = Array.from({ length: 2000 }, generateToken);
    expect(new Set(tokens).size).toBe(tokens.length);
    const seen = new Set(tokens.flatMap((t) => [...t.slice(4, 34)]));
    expect(seen.size).toBe(62);
  });

  test('a typo, a wrong prefix, a wrong length or a wrong checksum is not well formed', () => {
    const t = generateToken();
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    for (const i of [4, 10, 33, 34, 39]) expect(isWellFormedToken(flip(t, i))).toBe(false);
    expect(isWellFormedToken('tlx_' + t.slice(4))).toBe(false);
    expect(isWellFormedToken(t + 'a')).toBe(false);
    expect(isWellFormedToken(t.slice(0, -1))).toBe(false);
    expect(isWellFormedToken('')).toBe(false);
    expect(isWellFormedToken('tly_' + '!'.repeat(36))).toBe(false);
  });

  test('only a SHA-256 hex digest is derived for storage, compared in constant time', () => {
    const t = generateToken();
    const h = hashToken(t);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toContain(t.slice(4, 34));
    expect(hashesEqual(h, hashToken(t))).toBe(true);
    expect(hashesEqual(h, hashToken(generateToken()))).toBe(false);
    expect(hashesEqual(h, h.slice(0, 62))).toBe(false);
  });
});

describe('scopes', () => {
  test('one read and one write scope per resource; analytics is read only', () => {
    expect(ALL_SCOPES).toHaveLength(17);
    expect(ALL_SCOPES).toContain('analytics:read');
    expect(ALL_SCOPES).not.toContain('analytics:write');
  });

  test('a new key gets analytics:read alone', () => {
    expect(DEFAULT_SCOPES).toEqual(['analytics:read']);
  });

  test('a write scope grants its read scope, nothing else', () => {
    expect(expandScopes(['notes:write'])).toEqual(['notes:read', 'notes:write']);
    expect(expandScopes(['settings:write', 'team:read'])).toEqual(['settings:read', 'settings:write', 'team:read']);
    expect(expandScopes(['goals:read'])).toEqual(['goals:read']);
  });
});
