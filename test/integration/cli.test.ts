import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from '../support/http';
import { freePort } from '../support/processes';
import { waitFor } from '../support/wait';

/**
 * The operator's path, end to end: the built server (`node dist/main.js`) with its own data dir and
 * ports, and the real `tally` CLI (`node bin/tally.js`) talking to it over the admin socket.
 */
const root = path.join(__dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tally-cli-'));
let server: ChildProcess;
let base: string;
let exitCode: Promise<number | null>;
const logLines: Record<string, unknown>[] = [];
let acmeOrg = '';

interface CliResult {
  code: number;
  json: any;
  stdout: string;
  stderr: string;
}

function tally(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/tally.js'), ...args], {
      env: { ...process.env, TALLY_DATA_DIR: dataDir, ...env }, stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => {
      const text = (code === 0 ? stdout : stderr).trim();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, json, stdout, stderr });
    });
  });
}

const ok = async (args: string[]) => {
  const r = await tally(args);
  if (r.code !== 0) throw new Error(`tally ${args.join(' ')} failed: ${r.stderr}`);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim().split('\n')).toHaveLength(1); // one JSON object
  return r.json;
};


/**
 * The connections the server process has accepted on its admin socket, by socket inode (Linux /proc:
 * the server's end of a connection carries the socket's path; its fd shows Node accepted it). The
 * signal that a CLI command has reached the server, where a fixed sleep raced the CLI's start (half a
 * second and more on a loaded machine).
 */
function acceptedAdminConnections(): Set<string> {
  const socketPath = path.join(dataDir, 'admin.sock');
  const connected = new Set(readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[5] === '03' && f[7] === socketPath) // 03: connected
    .map((f) => f[6]));
  const accepted = new Set<string>();
  for (const fd of readdirSync(`/proc/${server.pid}/fd`)) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${server.pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && connected.has(inode)) accepted.add(inode);
  }
  return accepted;
}

async function waitForHealth(deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}`);
    try {
      if ((await request('GET', `${base}/healthz`)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the server did not answer /healthz within 30 s');
}

beforeAll(async () => {
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { stdio: 'inherit' });
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  base = `https://127.0.0.1:${httpsPort}`;
  server = spawn(process.execPath, [path.join(root, 'dist/main.js')], {
    env: {
      ...process.env, NODE_ENV: 'production', TALLY_LOG_LEVEL: 'info', TALLY_DATA_DIR: dataDir, TALLY_HOST: '127.0.0.1',
      TALLY_HTTPS_PORT: String(httpsPort), TALLY_HTTP_PORT: String(httpPort),
      TALLY_REDIS_PREFIX: `tally-cli-${randomBytes(4).toString('hex')}`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  exitCode = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  let buffered = '';
  server.stdout!.on('data', (d: Buffer) => {
    buffered += d;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const l of lines) if (l.trim()) logLines.push(JSON.parse(l));
  });
  await waitForHealth(30_000);
}, 90_000);

afterAll(async () => {
  if (server.exitCode === null) server.kill('SIGKILL');
});

test('org, user, site and key create print exactly the documented objects; the key reads GET /sites', async () => {
  const org = await ok(['org', 'create', '--name', 'Acme']);
  acmeOrg = org.id;
  expect(org).toEqual({ id: expect.any(String), name: 'Acme', retention_days: 1095 });
  const short = await ok(['org', 'create', '--name', 'Brief', '--retention-days', '30']);
  expect(short.retention_days).toBe(30);

  const user = await ok(['user', 'create', '--org', org.id, '--email', 'Ops@Acme.test', '--role', 'owner']);
  expect(user).toEqual({ id: expect.any(String), email: 'ops@acme.test', role: 'owner' });

  const site = await ok(['site', 'create', '--org', org.id, '--domain', 'acme.test', '--timezone', 'Europe/Berlin', '--currency', 'eur']);
  expect(site).toEqual({ id: expect.any(String), domain: 'acme.test', name: 'acme.test', timezone: 'Europe/Berlin', currency: 'EUR' });

  const key = await ok(['key', 'create', '--org', org.id, '--user', user.id, '--scopes', 'sites:write,team:read', '--name', 'ci']);
  expect(key).toEqual({
    id: expect.any(String), token: expect.stringMatching(/^tly_[0-9A-Za-z]{36}$/),
    scopes: ['sites:read', 'sites:write', 'team:read'], sites: null, expires_at: null,
  });

  const res = await request('GET', `${base}/api/v1/sites`, { token: key.token, headers: { 'x-request-id': 'cli-round-trip' } });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([expect.objectContaining({ id: site.id, domain: 'acme.test' })]);

  // The request was logged with its request id (the line crosses a pipe from the server: waited for).
  await waitFor('the request\'s log line', () => logLines.some((l) => l.reqId === 'cli-round-trip' && l.msg === 'request'));
  expect(logLines).toContainEqual(expect.objectContaining({ reqId: 'cli-round-trip', path: '/api/v1/sites', status: 200, msg: 'request' }));

  const limited = await ok(['key', 'create', '--org', org.id, '--user', user.id, '--sites', site.id, '--expires-at', '2099-01-01T00:00:00+02:00']);
  expect(limited).toMatchObject({ scopes: ['analytics:read'], sites: [site.id], expires_at: '2098-12-31T22:00:00.000Z' });
  // Ids in upper case name the same rows, as they do in the API.
  const shouted = await ok(['key', 'create', '--org', org.id.toUpperCase(), '--user', user.id.toUpperCase(), '--sites', site.id.toUpperCase()]);
  expect(shouted.sites).toEqual([site.id]);
  // An empty --sites (a script's unset variable) would be the widest key: refused, naming the flag.
  for (const empty of ['', ' , ']) {
    const refused = await tally(['key', 'create', '--org', org.id, '--user', user.id, '--sites', empty]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error.message).toContain('--sites names no site');
  }
});

test('key list shows every key without a token; key revoke and user remove end access at once', async () => {
  const org = await ok(['org', 'create', '--name', 'Revokers']);
  const owner = await ok(['user', 'create', '--org', org.id, '--email', 'owner@rev.test', '--role', 'owner']);
  const leaver = await ok(['user', 'create', '--org', org.id, '--email', 'leaver@rev.test', '--role', 'member']);
  await ok(['site', 'create', '--org', org.id, '--domain', 'rev.test']);
  const a = await ok(['key', 'create', '--org', org.id, '--user', owner.id]);
  const b = await ok(['key', 'create', '--org', org.id, '--user', leaver.id]);
  const sites = (token: string) => request('GET', `${base}/api/v1/sites`, { token });
  expect((await sites(a.token)).status).toBe(200);
  expect((await sites(b.token)).status).toBe(200);

  const list = await tally(['key', 'list', '--org', org.id]);
  expect(list.code).toBe(0);
  expect(list.stdout).not.toContain(a.token);
  expect(list.stdout).not.toContain(b.token);
  expect(list.json.keys.map((k: { id: string }) => k.id).sort()).toEqual([a.id, b.id].sort());
  for (const k of list.json.keys) {
    expect(k).not.toHaveProperty('token');
    expect(k).toMatchObject({ revoked: false, scopes: ['analytics:read'], sites: null, token_hint: expect.stringMatching(/^tly_/) });
  }

  expect(await ok(['key', 'revoke', '--key', a.id])).toEqual({ id: a.id, revoked: true });
  expect((await sites(a.token)).status).toBe(401);

  expect(await ok(['user', 'remove', '--org', org.id, '--user', leaver.id])).toEqual({ id: leaver.id, removed: true });
  expect((await sites(b.token)).status).toBe(401);
  const after = await ok(['key', 'list', '--org', org.id]);
  expect(after.keys.every((k: { revoked: boolean }) => k.revoked)).toBe(true);
});

test('the last owner cannot be removed (409 last_owner); an owner with a co-owner can', async () => {
  const org = await ok(['org', 'create', '--name', 'Owners']);
  const first = await ok(['user', 'create', '--org', org.id, '--email', 'first@own.test', '--role', 'owner']);
  const refused = await tally(['user', 'remove', '--org', org.id, '--user', first.id]);
  expect(refused.code).toBe(1);
  expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'last_owner', message: expect.stringContaining('last owner') });
  const second = await ok(['user', 'create', '--org', org.id, '--email', 'second@own.test', '--role', 'owner']);
  expect(await ok(['user', 'remove', '--org', org.id, '--user', first.id])).toEqual({ id: first.id, removed: true });
  expect((await tally(['user', 'remove', '--org', org.id, '--user', second.id])).code).toBe(1);
});

test('events stats shows the live collection counters, an event acknowledged through POST /api/event counted', async () => {
  const org = await ok(['org', 'create', '--name', 'Stats']);
  await ok(['site', 'create', '--org', org.id, '--domain', 'stats.test']);
  const before = await ok(['events', 'stats']);
  const sent = await request('POST', `${base}/api/event`, { body: { n: 'pageview', u: 'https://stats.test/', d: 'stats.test' } });
  expect(sent.status).toBe(202);
  const after = await ok(['events', 'stats']);
  expect(after.received).toBe(before.received + 1);
  expect(after.stored).toBe(before.stored + 1);
  expect(after.ack_ms.count).toBe((before.ack_ms?.count ?? 0) + 1);
  expect(after).toMatchObject({ pending: 0, dropped: expect.objectContaining({ unknown_domain: expect.any(Number) }) });
});

test.each([
  [['user', 'create', '--org', 'not-a-uuid', '--email', 'x@y.test', '--role', 'owner'], 'invalid_request', /--org must be a uuid/],
  [['user', 'create', '--org', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--email', 'x@y.test', '--role', 'owner'], 'not_found', /organisation/],
  [['user', 'create', '--org', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--email', 'x@y.test', '--role', 'king'], 'invalid_request', /role/],
  [['org', 'create'], 'invalid_request', /--name/],
  [['user', 'create', '--org', 'ORG', '--email', 'ops@acme.test', '--role', 'admin'], 'conflict', /already a member/],
  [['key', 'revoke', '--key', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d'], 'not_found', /key/],
  [['site', 'create', '--org', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--domain', 'http://bad/'], 'invalid_request', /domain/],
  [['frobnicate'], 'invalid_request', /unknown command/],
  [[], 'invalid_request', /^a command is required: org create, user create, user remove, .*seed \(--help for options\)$/],
  [['org'], 'invalid_request', /^a command is required: .*events stats, seed/],
  [['seed', '--site', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--events', '0', '--days', '7'], 'invalid_request', /^--events: must be a whole number from 1 to 1000000000$/],
  [['seed', '--site', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--events', '1e3', '--days', '7'], 'invalid_request', /^--events: must be a whole number from 1 to 1000000000$/],
  [['seed', '--site', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--events', '10', '--days', '0'], 'invalid_request', /^--days: must be a whole number from 1 to 3650$/],
  [['org', 'create', '--name', 'X', '--retention-days', '0x10'], 'invalid_request', /^--retention-days: must be a whole number from 1 to 36500$/],
  [['org', 'create', '--name', ' '], 'invalid_request', /^--name: must not be empty$/],
  [['org', 'create', '--name', 'x'.repeat(20000)], 'invalid_request', /^--name: must be at most 200 characters$/],
  [['org', 'create', '--name', 'Acme\u202e'], 'invalid_request', /^--name: must not contain control characters or bidirectional formatting \(U\+202E at character 5\)$/],
  [['site', 'create', '--org', 'ORG', '--domain', 'money.test', '--currency', 'XYZ'], 'invalid_request', /^--currency: must be an ISO 4217 currency code such as USD or EUR$/],
  // One --name rule for organisations, sites and keys.
  [['site', 'create', '--org', 'ORG', '--domain', 'named.test', '--name', ' '], 'invalid_request', /^--name: must not be empty$/],
  [['key', 'create', '--org', 'ORG', '--user', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--name', 'k'.repeat(201)], 'invalid_request', /^--name: must be at most 200 characters$/],
  [['key', 'create', '--org', 'ORG', '--user', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--scopes', ''], 'invalid_request', /^--scopes names no scope/],
  [['key', 'create', '--org', 'ORG', '--user', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--scopes', 'analytics:read,settings:wrte'], 'invalid_request', /^--scopes: "settings:wrte" is not a scope; it takes analytics:read,sites:read,/],
  [['key', 'create', '--org', 'ORG', '--user', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--sites', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d,example.com'], 'invalid_request', /^--sites: "example.com" is not a site uuid$/],
  [['key', 'create', '--org', 'ORG', '--user', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d', '--expires-at', '2020-01-01T00:00:00Z'], 'invalid_request', /^--expires-at is in the past/],
  [['seed', '--site', 'not-a-uuid', '--events', '10', '--days', '7'], 'invalid_request', /^--site must be a site uuid$/],
  [['events', 'import', '--site', 'not-a-uuid', '--file', '/dev/null'], 'invalid_request', /^--site must be a site uuid$/],
  [['retention', 'purge', '--org', 'not-a-uuid'], 'invalid_request', /^--org must be a uuid$/],
  [['retention', 'purge', '--org', '7b0c56fb-1e57-4a41-b8b4-2a4ddb1a2c1d'], 'not_found', /organisation/],
])('tally %j fails with a JSON error on stderr and a non-zero exit', async (args, code, message) => {
  const r = await tally(args.map((x) => (x === 'ORG' ? acmeOrg : x)));
  expect(r.code).not.toBe(0);
  expect(r.stdout).toBe('');
  expect(r.json).toEqual({ error: { code, message: expect.stringMatching(message) } });
});

test('retention purge prints one object: per organisation its cutoff and the rows removed per table', async () => {
  const out = await ok(['retention', 'purge', '--org', acmeOrg]);
  expect(out).toEqual({
    orgs: [{ org_id: acmeOrg, retention_days: 1095, cutoff: expect.stringMatching(/T00:00:00\.000Z$/), sites: 1, deleted: expect.objectContaining({ events: 0, first_seen: 0 }) }],
    deleted: expect.objectContaining({ events: 0, payments: 0 }),
    compacted: expect.objectContaining({ events: 0, first_seen: 0 }),
    mutations: 0,
  });
});

test('a CLI that cannot reach the server says so in JSON', async () => {
  const r = await tally(['org', 'create', '--name', 'X'], { TALLY_DATA_DIR: path.join(dataDir, 'nowhere') });
  expect(r.code).not.toBe(0);
  expect(r.json.error.code).toBe('server_unreachable');
});

test('the admin socket is private to its owner', () => {
  const mode = require('node:fs').statSync(path.join(dataDir, 'admin.sock')).mode & 0o777;
  expect(mode).toBe(0o600);
});

/** Another built server next to the running one; its exit code and everything it printed. */
async function secondServer(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const second = spawn(process.execPath, [path.join(root, 'dist/main.js')], {
    env: { ...process.env, NODE_ENV: 'production', TALLY_LOG_LEVEL: 'info', TALLY_HOST: '127.0.0.1', TALLY_HTTPS_PORT: '0', TALLY_HTTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  second.stdout!.on('data', (d: Buffer) => (output += d));
  second.stderr!.on('data', (d: Buffer) => (output += d));
  const code = await new Promise<number | null>((resolve) => second.on('exit', resolve));
  return { code, output };
}

test('a second server on a running server\'s data directory is refused by a JSON line that names TALLY_DATA_DIR and the likely cause', async () => {
  const { code, output } = await secondServer({ TALLY_DATA_DIR: dataDir, TALLY_ADMIN_SOCKET: path.join(dataDir, 'second.sock') });
  expect(code).toBe(1);
  const fatal = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.msg === 'tally failed to start');
  expect(fatal.err).toMatch(/^TALLY_DATA_DIR: cannot open the embedded ClickHouse in .*; is another Tally server running on this data directory\?$/);
}, 60_000);

test('a second server pointed at a running server\'s admin socket refuses to start, naming TALLY_ADMIN_SOCKET, and takes nothing over', async () => {
  const other = mkdtempSync(path.join(os.tmpdir(), 'tally-cli-second-'));
  const { code, output } = await secondServer({ TALLY_DATA_DIR: other, TALLY_ADMIN_SOCKET: path.join(dataDir, 'admin.sock') });
  expect(code).toBe(1);
  expect(output).toContain('TALLY_ADMIN_SOCKET');
  // The first server still owns its socket: commands reach its database.
  const made = await tally(['org', 'create', '--name', 'Still mine']);
  expect(made.code).toBe(0);
  expect((await tally(['key', 'list', '--org', made.json.id])).json).toEqual({ keys: [] });
  expect(existsSync(path.join(dataDir, 'admin.sock'))).toBe(true);
}, 60_000);

test('SIGTERM shuts the server down cleanly, cutting an import still reading its file instead of waiting for it', async () => {
  const site = await ok(['site', 'create', '--org', acmeOrg, '--domain', 'import-cut.test']);
  // An import whose file is still arriving (stdin held open): its lines are only staged so far.
  const before = acceptedAdminConnections();
  const importer = spawn(process.execPath, [path.join(root, 'bin/tally.js'), 'events', 'import', '--site', site.id, '--file', '-'], {
    env: { ...process.env, TALLY_DATA_DIR: dataDir }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let cliError = '';
  importer.stderr!.on('data', (d: Buffer) => (cliError += d));
  importer.stdin!.write(`${JSON.stringify({ ts: new Date().toISOString(), name: 'pageview', url: 'https://import-cut.test/' })}\n`);
  // SIGTERM once the server has taken the import's connection (the CLI starts in 0.5-1 s under load).
  await waitFor('the import to reach the server', () => [...acceptedAdminConnections()].some((inode) => !before.has(inode)));
  const t0 = Date.now();
  server.kill('SIGTERM');
  expect(await exitCode).toBe(0);
  expect(Date.now() - t0).toBeLessThan(10_000);
  const cliCode = await new Promise<number | null>((resolve) => (importer.exitCode !== null ? resolve(importer.exitCode) : importer.on('exit', resolve)));
  expect(cliCode).not.toBe(0);
  expect(JSON.parse(cliError).error.message).toMatch(/closed the connection before answering .*shutting down; an import cut by a shutdown stored none of its events/);
  expect(logLines).toContainEqual(expect.objectContaining({ msg: 'ingest flushed' }));
  // The cut is expected: a warning, not an error.
  expect(logLines).toContainEqual(expect.objectContaining({ level: 40, msg: 'admin command cut before its body was in' }));
  expect(logLines.filter((l) => l.msg === 'admin command failed')).toEqual([]);
  expect(logLines).toContainEqual(expect.objectContaining({ msg: 'shutting down: finishing requests in flight (up to 10 s), then flushing ingest', signal: 'SIGTERM' }));
  expect(existsSync(path.join(dataDir, 'admin.sock'))).toBe(false);
}, 30_000);
