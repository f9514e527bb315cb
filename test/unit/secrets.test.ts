import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config';
import { loadSecretKey, secretBox } from '../../infra/secrets';

describe('sealed integration secrets', () => {
  const box = secretBox(Buffer.alloc(32, 7));

  test('open gives back what seal was given; two seals of one secret differ (fresh IV)', () => {
    const a = box.seal('sk_live_abc');
    expect(box.open(a)).toBe('sk_live_abc');
    expect(box.seal('sk_live_abc')).not.toBe(a);
    expect(a).not.toContain('sk_live_abc');
  });

  test('a tampered ciphertext or another key is refused, not decrypted to garbage', () => {
    const sealed = box.seal('whsec_123');
    const [v, iv, tag, body] = sealed.split('.');
    const flipped = Buffer.from(body, 'base64');
    flipped[0] ^= 1;
    expect(() => box.open([v, iv, tag, flipped.toString('base64')].join('.'))).toThrow();
    expect(() => secretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
    expect(() => box.open('plain text')).toThrow('not a sealed secret');
  });

  test('without TALLY_SECRET_KEY the data directory gets a 0600 key file, reused on the next start', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-secret-'));
    try {
      const first = loadSecretKey(undefined, dir);
      expect(first).toHaveLength(32);
      expect(statSync(path.join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
      expect(loadSecretKey(undefined, dir).equals(first)).toBe(true);
      expect(readFileSync(path.join(dir, 'secret.key'), 'utf8').trim()).toBe(first.toString('hex'));
      expect(loadSecretKey('ab'.repeat(32), dir).equals(Buffer.alloc(32, 0xab))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a data directory the service creates is private to its user (0700)', () => {
    const parent = mkdtempSync(path.join(os.tmpdir(), 'tally-secret-'));
    const dir = path.join(parent, 'fresh', 'data');
    try {
      loadSecretKey(undefined, dir);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(path.dirname(dir)).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  test('TALLY_SECRET_KEY and TALLY_STRIPE_API_URL are checked at start', () => {
    expect(() => loadConfig({ TALLY_SECRET_KEY: 'short' })).toThrow(/TALLY_SECRET_KEY must be 64 hex digits/);
    expect(() => loadConfig({ TALLY_STRIPE_API_URL: 'ftp://x' })).toThrow(/TALLY_STRIPE_API_URL must be an http/);
    expect(loadConfig({ TALLY_STRIPE_API_URL: 'http://127.0.0.1:12111' }).stripeApiUrl?.port).toBe('12111');
  });
});
