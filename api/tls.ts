import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { Config } from '../core/config';
import { logger } from '../core/logger';

export interface TlsPair { cert: string; key: string }

/**
 * The operator's pair when TALLY_TLS_CERT/KEY are set; otherwise a self-signed pair generated into the
 * data dir on first start and reused afterwards (so clients that pinned it keep working).
 */
export async function loadTls(config: Config): Promise<TlsPair> {
  if (config.tlsCert || config.tlsKey) {
    if (!config.tlsCert || !config.tlsKey) throw new Error('TALLY_TLS_CERT and TALLY_TLS_KEY must be set together');
    return checkedPair(readPem('TALLY_TLS_CERT', config.tlsCert), readPem('TALLY_TLS_KEY', config.tlsKey));
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'self-signed.crt');
  const keyFile = path.join(dir, 'self-signed.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  }
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    // selfsigned 5 ignores `days` (it gave 365); the end date is what it reads.
    notAfterDate: new Date(Date.now() + 825 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  } as Parameters<typeof generate>[1]);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(certFile, pems.cert);
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  logger.info({ certFile }, 'generated a self-signed TLS certificate');
  return { cert: pems.cert, key: pems.private };
}

function readPem(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${variable}: cannot read "${file}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/**
 * The operator's files, checked before storage opens: otherwise a wrong file surfaces later as an
 * OpenSSL message from the HTTPS listener that names neither variable.
 */
function checkedPair(cert: string, key: string): TlsPair {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new Error('TALLY_TLS_CERT: the file is not a PEM certificate');
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new Error('TALLY_TLS_KEY: the file is not an unencrypted PEM private key');
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new Error('TALLY_TLS_KEY: the key does not belong to the certificate in TALLY_TLS_CERT');
  }
  return { cert, key };
}
