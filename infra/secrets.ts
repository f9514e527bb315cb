import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Integration credentials at rest: AES-256-GCM under the service's secret key, so a copy of the
 * database (a backup, a ClickHouse user with SELECT) does not hold usable provider keys. The key is
 * TALLY_SECRET_KEY (64 hex digits) or, when unset, `secret.key` in the data directory, made on first
 * use. Processes that share one ClickHouse server (server mode) must be given the same TALLY_SECRET_KEY.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const VERSION = 'v1';

export function secretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || !body) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/** The configured key, or the data directory's key file (created with mode 0600 when missing). */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'hex');
  const file = path.join(dataDir, 'secret.key');
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // 'wx': two processes starting at once must not each write a different key.
  try {
    writeFileSync(file, key.toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
    chmodSync(file, 0o600);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  }
}
