import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/config';

/**
 * docker-compose.yml and the Dockerfile cannot run here (no Docker daemon in CI), so their contract
 * is checked as text: the four services, their volumes, and role environments that loadConfig accepts.
 */
const root = path.join(__dirname, '..', '..');
const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');

/** The lines of one top-level service block. */
function service(name: string): string {
  const m = new RegExp(`^  ${name}:\\n((?:    .*\\n|\\s*\\n)+)`, 'm').exec(compose);
  if (!m) throw new Error(`service ${name} missing`);
  return m[1];
}

/** What the operator exports before `docker compose up` (compose refuses to start without `${X:?...}` ones). */
const EXPORTED: Record<string, string> = { TALLY_SECRET_KEY: 'ab'.repeat(32) };

/** `KEY: value` pairs of the shared x-tally-env anchor plus a service's own environment. */
function env(name: string): Record<string, string> {
  const substitute = (v: string) =>
    v.replace(/\$\{\w+:-(\w+)\}/, '$1').replace(/\$\{(\w+):\?[^}]*\}/, (_m, n: string) => EXPORTED[n] ?? '');
  const pairs = (text: string) =>
    Object.fromEntries([...text.matchAll(/^\s+([A-Z_]+): "?([^"\n]*)"?$/gm)].map((m) => [m[1], substitute(m[2])]));
  const shared = /x-tally-env: &tally-env\n((?:  .*\n)+)/.exec(compose)![1];
  return { ...pairs(shared), ...pairs(service(name)) };
}

test('clickhouse-server, redis, the api role and the worker role, each with a volume', () => {
  expect(service('clickhouse')).toMatch(/image: clickhouse\/clickhouse-server:/);
  expect(service('redis')).toMatch(/image: redis:/);
  for (const s of ['clickhouse', 'redis', 'api', 'worker']) expect(service(s)).toMatch(/volumes:\n\s+- [\w-]+:\//);
  const declared = /^volumes:\n((?:  .*\n?)+)/m.exec(compose)![1];
  for (const v of compose.matchAll(/^\s+- ([\w-]+):\//gm)) expect(declared).toContain(`${v[1]}:`);
});

test.each(['api', 'worker'])('the %s role environment is one loadConfig accepts, with a ClickHouse server and Redis', (role) => {
  const c = loadConfig(env(role));
  expect(c.role).toBe(role);
  expect(c.clickhouse.url).toBe('http://clickhouse:8123');
  expect(c.redisUrl).toBe('redis://redis:6379');
  expect(c.dataDir).toBe('/var/lib/tally');
  // Each role has its own data volume, so the key that seals integration credentials must come from
  // the environment (required: compose stops with the message when it is not exported).
  expect(c.secretKey).toBe(EXPORTED.TALLY_SECRET_KEY);
});

test('the api role publishes both ports; the worker waits for the api (which migrates first)', () => {
  expect(service('api')).toMatch(/"8443:8443"/);
  expect(service('api')).toMatch(/"8080:8080"/);
  expect(service('worker')).toMatch(/api: \{ condition: service_healthy \}/);
});

test('the image builds the bundle, runs dist/main.js and probes /healthz', () => {
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/RUN node scripts\/build\.mjs/);
  expect(dockerfile).toMatch(/CMD \["node", (?:"--[^"]+", )*"dist\/main\.js"\]/);
  expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/healthz/);
  expect(dockerfile).toMatch(/FROM node:20-bookworm-slim/);
});

test('the lockfile lists every optional platform binary, so npm ci accepts it on a fresh clone', () => {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const missing = Object.values(lock.packages as Record<string, { optionalDependencies?: Record<string, string> }>)
    .flatMap((p) => Object.keys(p.optionalDependencies ?? {}))
    .filter((dep) => !lock.packages[`node_modules/${dep}`]);
  // Fix with: node scripts/fix-lock-optional.js
  expect(missing).toEqual([]);
});
