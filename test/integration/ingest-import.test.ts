import { Readable } from 'node:stream';
import { setClock } from '../../core/clock';
import { geoLookup } from '../../ingest/enrich/geo';
import { importEvents } from '../../ingest/import/importer';
import { sessionIdFor, visitorIdFor } from '../../ingest/hash';
import { startTestService, type TestService } from '../support/harness';
import { request } from '../support/http';

/** `events import` end to end: real chDB, rows read back from the events table. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

interface Row {
  ts: string; name: string; visitor_id: string; session_id: string; session_start: string; pathname: string;
  entry_path: string; referrer: string; channel: string; country: string; city: string; browser: string;
  device: string; utm_campaign: string; is_bot: number; bot_kind: string; value_cents: number; props: Record<string, string>;
}

async function rows(siteId: string): Promise<Row[]> {
  const store = svc.running.ctx.store;
  return store.query<Row>(
    `SELECT ts, name, toString(visitor_id) AS visitor_id, toString(session_id) AS session_id, session_start, pathname,
            entry_path, referrer, channel, country, city, browser, device, utm_campaign, is_bot, bot_kind, value_cents, props
     FROM ${store.table('events')} WHERE site_id = {s:UUID} ORDER BY ts, pathname`,
    { s: siteId },
  );
}

test('sessions are cut after 30 minutes of inactivity and carry their first event\'s attributes', async () => {
  const t = await svc.tenant({ domain: 'shop.example' });
  const base = { user_agent: CHROME_MAC, ip: '81.2.69.160' };
  const out = await svc.admin('events import', { site: t.siteId }, ndjson([
    { ...base, ts: '2026-03-01T10:00:00Z', name: 'pageview', url: 'https://shop.example/landing?utm_campaign=spring&utm_source=newsletter&utm_medium=email', referrer: 'https://www.google.com/' },
    { ...base, ts: '2026-03-01T10:10:00+00:00', name: 'pageview', url: 'https://shop.example/pricing', referrer: 'https://news.ycombinator.com/item?id=1' },
    { ...base, ts: '2026-03-01T10:39:59Z', name: 'Signup', url: 'https://shop.example/pricing', value_cents: 1500, props: { plan: 'pro', seats: 3 } },
    // 30 minutes after the previous event: a new session, with its own first-event attributes.
    { ...base, ts: '2026-03-01T11:09:59Z', name: 'pageview', url: 'https://shop.example/docs', referrer: 'https://chatgpt.com/' },
  ]));
  expect(out).toEqual({ imported: 4, rejected: 0, errors: [] });
  const r = await rows(t.siteId);
  expect(r).toHaveLength(4);
  expect(new Set(r.map((x) => x.visitor_id)).size).toBe(1);
  const [a, b, c, d] = r;
  expect(b.session_id).toBe(a.session_id);
  expect(c.session_id).toBe(a.session_id);
  expect(d.session_id).not.toBe(a.session_id);
  for (const x of [a, b, c]) {
    expect(x).toMatchObject({ entry_path: '/landing', channel: 'Email', referrer: 'google.com', utm_campaign: 'spring', session_start: '2026-03-01 10:00:00.000' });
  }
  expect(b.pathname).toBe('/pricing');
  expect(d).toMatchObject({ entry_path: '/docs', channel: 'AI Assistants', referrer: 'chatgpt.com', utm_campaign: '', session_start: '2026-03-01 11:09:59.000' });
  expect(a).toMatchObject({ country: 'GB', city: 'London', browser: 'Chrome', device: 'Desktop', is_bot: 0 });
  expect(c).toMatchObject({ name: 'Signup', value_cents: 1500, props: { plan: 'pro', seats: '3' } });
});

test('explicit visitor and session strings map to the same UInt64 ids on every import', async () => {
  const t = await svc.tenant();
  const line = { ts: '2026-03-02T08:00:00Z', name: 'pageview', url: `https://${t.domain}/a`, visitor: 'v-42', session: 's-1' };
  await svc.admin('events import', { site: t.siteId }, ndjson([line]));
  await svc.admin('events import', { site: t.siteId }, ndjson([{ ...line, ts: '2026-03-02T09:30:00Z', url: `https://${t.domain}/b` }]));
  const r = await rows(t.siteId);
  expect(r.map((x) => x.visitor_id)).toEqual([visitorIdFor(t.siteId, 'v-42'), visitorIdFor(t.siteId, 'v-42')]);
  // The explicit session is kept even across a 90-minute gap.
  expect(r.map((x) => x.session_id)).toEqual([sessionIdFor(t.siteId, 's-1', 'v-42'), sessionIdFor(t.siteId, 's-1', 'v-42')]);
  // The second import continues the stored session: one start and entry page, so it is counted once.
  expect(r[1]).toMatchObject({ entry_path: '/a', session_start: '2026-03-02 08:00:00.000' });
});

test('visitor and session strings must not hold control characters: the ids hash their parts joined by U+001F, so two visitors could meet', async () => {
  const t = await svc.tenant();
  const line = (visitor: string, session: string, path: string) => ({ ts: '2026-03-02T08:00:00Z', name: 'pageview', url: `https://${t.domain}${path}`, visitor, session });
  const out = await svc.admin('events import', { site: t.siteId }, ndjson([line('a\u001fb', 'c', '/1'), line('a', 'b\u001fc', '/2'), line('a', 'b', '/3'), line('v\tw', 's', '/4')]));
  expect(out).toEqual({ imported: 1, rejected: 3, errors: [
    { line: 1, message: 'visitor must not contain control characters (U+001F at character 2)' },
    { line: 2, message: 'session must not contain control characters (U+001F at character 2)' },
    { line: 4, message: 'visitor must not contain control characters (U+0009 at character 2)' },
  ] });
});

test('a session string belongs to its visitor: two visitors\' session "1" are two sessions', async () => {
  const t = await svc.tenant();
  const url = (p: string) => `https://${t.domain}${p}`;
  await svc.admin('events import', { site: t.siteId }, ndjson([
    { ts: '2026-03-02T12:00:00Z', name: 'pageview', url: url('/x'), visitor: 'X', session: '1', referrer: 'https://news.ycombinator.com/', country: 'FR' },
    { ts: '2026-03-02T12:05:00Z', name: 'pageview', url: url('/y'), visitor: 'Y', session: '1', country: 'JP' },
    { ts: '2026-03-02T12:10:00Z', name: 'pageview', url: url('/n1'), session: 'anon' },
    { ts: '2026-03-02T12:11:00Z', name: 'pageview', url: url('/n2'), session: 'anon' },
  ]));
  const r = await rows(t.siteId);
  const [x, y, n1, n2] = r;
  expect(x.session_id).toBe(sessionIdFor(t.siteId, '1', 'X'));
  expect(y.session_id).toBe(sessionIdFor(t.siteId, '1', 'Y'));
  expect(x.session_id).not.toBe(y.session_id);
  expect(y).toMatchObject({ country: 'JP', entry_path: '/y', channel: 'Direct' });
  // Without a visitor the string alone names the session.
  expect(n1.session_id).toBe(sessionIdFor(t.siteId, 'anon'));
  expect(n2.session_id).toBe(n1.session_id);
});

test('visitors without a visitor field are told apart by ip and user agent', async () => {
  const t = await svc.tenant();
  const url = `https://${t.domain}/`;
  await svc.admin('events import', { site: t.siteId }, ndjson([
    { ts: '2026-03-03T08:00:00Z', name: 'pageview', url, ip: '1.1.1.1', user_agent: CHROME_MAC },
    { ts: '2026-03-03T08:01:00Z', name: 'pageview', url, ip: '1.1.1.1', user_agent: IPHONE },
    { ts: '2026-03-03T08:02:00Z', name: 'pageview', url, ip: '8.8.8.8', user_agent: CHROME_MAC },
    { ts: '2026-03-03T08:03:00Z', name: 'pageview', url, ip: '1.1.1.1', user_agent: CHROME_MAC },
  ]));
  const r = await rows(t.siteId);
  expect(new Set(r.map((x) => x.visitor_id)).size).toBe(3);
  expect(r[0].session_id).toBe(r[3].session_id);
  expect(r[1]).toMatchObject({ device: 'Mobile', browser: 'Safari', country: 'AU' });
});

test('country, region and city override the IP lookup; crawler user agents are bots', async () => {
  const t = await svc.tenant();
  const url = `https://${t.domain}/`;
  await svc.admin('events import', { site: t.siteId }, ndjson([
    { ts: '2026-03-04T08:00:00Z', name: 'pageview', url, ip: '8.8.8.8', country: 'fr', city: 'Lyon', visitor: 'a' },
    { ts: '2026-03-04T08:01:00Z', name: 'pageview', url, user_agent: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', visitor: 'b' },
  ]));
  const [a, b] = await rows(t.siteId);
  expect(a).toMatchObject({ country: 'FR', city: 'Lyon', is_bot: 0 });
  expect(b).toMatchObject({ is_bot: 1, bot_kind: 'ai_training' });
});

test('bad lines are rejected with their line numbers while good lines import', async () => {
  const t = await svc.tenant();
  const url = `https://${t.domain}/`;
  const lines = [
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url }),
    '{not json',
    JSON.stringify({ name: 'pageview', url }),
    '',
    JSON.stringify({ ts: '2026-03-05T08:00:00', name: 'pageview', url }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', url }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url: '/relative' }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url: 'ftp://x.example/' }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url, ip: 'nope' }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url, value_cents: 1.5 }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url, props: { a: { b: 1 } } }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url, country: 'USA' }),
    JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 42, url }),
    JSON.stringify({ ts: '2026-03-05T08:01:00Z', name: 'pageview', url }),
    JSON.stringify({ ts: '2026-03-05T08:02:00Z', name: 'pageview', url, props: { big: 'x'.repeat(70_000) } }),
  ];
  const out = await svc.admin('events import', { site: t.siteId }, lines.join('\n') + '\n');
  expect(out.imported).toBe(2);
  expect(out.rejected).toBe(12);
  expect(out.errors).toHaveLength(10);
  expect(out.errors).toEqual([
    { line: 2, message: 'not valid JSON' },
    { line: 3, message: 'ts is required' },
    { line: 5, message: expect.stringContaining('ts must be an ISO 8601 timestamp with an offset') },
    { line: 6, message: 'name is required' },
    { line: 7, message: 'url must be an absolute URL' },
    { line: 8, message: 'url must be an http or https URL' },
    { line: 9, message: 'ip must be an IPv4 or IPv6 address' },
    { line: 10, message: 'value_cents must be an integer (cents)' },
    { line: 11, message: 'props.a must be a string, number or boolean' },
    { line: 12, message: expect.stringContaining('country') },
  ]);
  expect(await rows(t.siteId)).toHaveLength(2);
});

test('exit_link and file_download lines need their link target: without it they would be stored and shown nowhere', async () => {
  const t = await svc.tenant();
  const line = (extra: object) => JSON.stringify({ ts: '2026-03-05T08:00:00Z', url: `https://${t.domain}/`, ...extra });
  const out = await svc.admin('events import', { site: t.siteId }, [
    line({ name: 'exit_link' }), line({ name: 'file_download', link: '' }), line({ name: 'exit_link', link: 'https://github.com/x' }),
  ].join('\n'));
  expect(out).toEqual({ imported: 1, rejected: 2, errors: [
    { line: 1, message: 'link is required for exit_link events: the link target' },
    { line: 2, message: expect.stringMatching(/^link /) },
  ] });
});

test('country must be an assigned ISO 3166-1 code (any case, Kosovo\'s XK too); value_cents must not be negative', async () => {
  const t = await svc.tenant();
  const line = (extra: object) => JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'Signup', url: `https://${t.domain}/`, ...extra });
  const out = await svc.admin('events import', { site: t.siteId }, [
    line({ country: 'ZZ' }), line({ country: 'xx' }), line({ country: 'USA' }), line({ value_cents: -100 }),
    line({ country: 'de', visitor: 'a' }), line({ country: 'XK', value_cents: 0, visitor: 'b' }),
  ].join('\n'));
  expect(out).toEqual({
    imported: 2, rejected: 4, errors: [
      { line: 1, message: 'country must be an ISO 3166-1 alpha-2 code' },
      { line: 2, message: 'country must be an ISO 3166-1 alpha-2 code' },
      { line: 3, message: 'country must be an ISO 3166-1 alpha-2 code' },
      { line: 4, message: 'value_cents must not be negative' },
    ],
  });
  expect((await rows(t.siteId)).map((r) => r.country).sort()).toEqual(['DE', 'XK']);
});

test('a BOM before line 1 is skipped; unpaired surrogates, impossible dates and years no report reaches are refused by line', async () => {
  const t = await svc.tenant();
  const url = `https://${t.domain}/`;
  const lines = [
    '\ufeff' + JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url }),
    '{"ts":"2026-03-05T08:00:00Z","name":"pageview","url":"' + url + '","props":{"a":"\\ud800"}}',
    '{"ts":"2026-03-05T08:00:00Z","name":"x\\udc00","url":"' + url + '"}',
    JSON.stringify({ ts: '2026-02-30T10:00:00Z', name: 'pageview', url }),
    JSON.stringify({ ts: '2026-03-05T24:00:00Z', name: 'pageview', url }),
    JSON.stringify({ ts: '0000-01-01T00:00:00Z', name: 'pageview', url }),
    JSON.stringify({ ts: '2200-06-01T00:00:00Z', name: 'pageview', url }), // 2200 itself is past every report window
    // A pair escaped as two \u escapes is one well-formed character, and a +hhmm offset is fine.
    '{"ts":"2026-03-05T09:00:00+0100","name":"pageview","url":"' + url + '","props":{"smile":"\\ud83d\\ude00"}}',
    // ISO 8601's hour-only offset; an offset of 24 hours is no offset.
    JSON.stringify({ ts: '2026-03-05T03:00:00-05', name: 'pageview', url }),
    JSON.stringify({ ts: '2026-03-05T03:00:00+24', name: 'pageview', url }),
  ];
  const out = await svc.admin('events import', { site: t.siteId }, lines.join('\r\n'));
  expect(out.errors).toEqual([
    { line: 2, message: 'props.a must be valid Unicode text (it holds an unpaired surrogate escape)' },
    { line: 3, message: 'name must be valid Unicode text (it holds an unpaired surrogate escape)' },
    { line: 4, message: 'ts is not a valid date and time: 2026-02-30T10:00:00Z' },
    { line: 5, message: 'ts is not a valid date and time: 2026-03-05T24:00:00Z' },
    { line: 6, message: 'ts must lie between 1970 and 2200' },
    { line: 7, message: 'ts must lie between 1970 and 2200' },
    { line: 10, message: 'ts is not a valid date and time: 2026-03-05T03:00:00+24' },
  ]);
  expect(out).toMatchObject({ imported: 3, rejected: 7 });
  const stored = await rows(t.siteId);
  expect(stored.map((r) => r.ts)).toEqual(['2026-03-05 08:00:00.000', '2026-03-05 08:00:00.000', '2026-03-05 08:00:00.000']);
  expect(stored.map((r) => r.props.smile ?? null)).toContain('\u{1F600}');
});

test('a line that is not UTF-8 (a Latin-1 export) is refused by number; the others import', async () => {
  const t = await svc.tenant();
  const file = Buffer.concat([
    Buffer.from(JSON.stringify({ ts: '2026-03-05T08:00:00Z', name: 'pageview', url: `https://${t.domain}/ok` }) + '\n'),
    Buffer.from(`{"ts":"2026-03-05T08:01:00Z","name":"pageview","url":"https://${t.domain}/caf\xe9"}\n`, 'latin1'),
    Buffer.from(JSON.stringify({ ts: '2026-03-05T08:02:00Z', name: 'pageview', url: `https://${t.domain}/caf\u00e9` }) + '\n'),
  ]);
  const out = await svc.admin('events import', { site: t.siteId }, file);
  expect(out).toEqual({ imported: 2, rejected: 1, errors: [{ line: 2, message: 'line is not valid UTF-8 text' }] });
  expect((await rows(t.siteId)).map((r) => r.pathname)).toEqual(['/ok', '/café']);
});

test('an unknown site is refused', async () => {
  await expect(svc.admin('events import', { site: '00000000-0000-4000-8000-000000000000' }, '')).rejects.toMatchObject({ status: 404 });
});

describe('sessions continue the visitor\'s stored session across import runs', () => {
  const line = (domain: string, visitor: string, ts: string, pathname: string, extra: object = {}) =>
    ({ ts, name: 'pageview', url: `https://${domain}${pathname}`, visitor, user_agent: CHROME_MAC, ...extra });

  /** One session of visitor v, 10:00 and 10:10, entered on /a from Google. */
  const importFirstFile = (domain: string, siteId: string) =>
    svc.admin('events import', { site: siteId }, ndjson([
      line(domain, 'v', '2026-04-01T10:00:00Z', '/a', { referrer: 'https://www.google.com/' }),
      line(domain, 'v', '2026-04-01T10:10:00Z', '/b'),
    ]));

  async function firstRun(domain: string, siteId: string): Promise<Row[]> {
    await importFirstFile(domain, siteId);
    const stored = await rows(siteId);
    expect(stored).toHaveLength(2);
    expect(stored[1].session_id).toBe(stored[0].session_id);
    return stored;
  }

  test('a second import within 30 minutes joins the stored session, with its id, start and first-event attributes', async () => {
    const t = await svc.tenant();
    const [first] = await firstRun(t.domain, t.siteId);
    await svc.admin('events import', { site: t.siteId }, ndjson([
      line(t.domain, 'v', '2026-04-01T10:30:00Z', '/c', { referrer: 'https://chatgpt.com/' }),
      // 45 minutes after the stored 10:10, but 25 after the imported 10:30: still the same session.
      line(t.domain, 'v', '2026-04-01T10:55:00Z', '/d'),
      // Another visitor of the same import is not pulled into v's session.
      line(t.domain, 'w', '2026-04-01T10:31:00Z', '/w'),
    ]));
    const r = await rows(t.siteId);
    const ofV = r.filter((x) => x.visitor_id === visitorIdFor(t.siteId, 'v'));
    expect(ofV.map((x) => x.pathname)).toEqual(['/a', '/b', '/c', '/d']);
    for (const x of ofV) {
      expect(x).toMatchObject({ session_id: first.session_id, session_start: '2026-04-01 10:00:00.000', entry_path: '/a', referrer: 'google.com', channel: 'Organic Search' });
    }
    const w = r.find((x) => x.pathname === '/w')!;
    expect(w.session_id).not.toBe(first.session_id);
    expect(w).toMatchObject({ session_start: '2026-04-01 10:31:00.000', entry_path: '/w' });
  });

  test('an import 30 minutes or more after the stored session starts a new one', async () => {
    const t = await svc.tenant();
    const [first] = await firstRun(t.domain, t.siteId);
    await svc.admin('events import', { site: t.siteId }, ndjson([
      line(t.domain, 'v', '2026-04-01T10:40:00Z', '/late', { referrer: 'https://chatgpt.com/' }), // exactly 30:00 after 10:10
      line(t.domain, 'v', '2026-04-01T10:45:00Z', '/later'),
    ]));
    const [, , late, later] = await rows(t.siteId);
    expect(late.session_id).not.toBe(first.session_id);
    expect(later.session_id).toBe(late.session_id);
    for (const x of [late, later]) {
      expect(x).toMatchObject({ session_start: '2026-04-01 10:40:00.000', entry_path: '/late', referrer: 'chatgpt.com', channel: 'AI Assistants' });
    }
  });

  test('imported events before or between stored ones never rewrite the stored rows', async () => {
    const t = await svc.tenant();
    const stored = await firstRun(t.domain, t.siteId);
    await svc.admin('events import', { site: t.siteId }, ndjson([
      line(t.domain, 'v', '2026-04-01T09:50:00Z', '/before', { referrer: 'https://news.ycombinator.com/' }),
      line(t.domain, 'v', '2026-04-01T10:05:00Z', '/between'),
    ]));
    const r = await rows(t.siteId);
    expect(r.map((x) => x.pathname)).toEqual(['/before', '/a', '/between', '/b']);
    const [before, a, between, b] = r;
    // The stored rows are exactly as the first run wrote them.
    expect([a, b]).toEqual(stored);
    // Before the stored session: a session of its own (stored rows are not re-cut to start earlier).
    expect(before.session_id).not.toBe(a.session_id);
    expect(before).toMatchObject({ session_start: '2026-04-01 09:50:00.000', entry_path: '/before', referrer: 'news.ycombinator.com' });
    // Between stored events: continues the stored session that precedes it.
    expect(between).toMatchObject({ session_id: a.session_id, session_start: '2026-04-01 10:00:00.000', entry_path: '/a', referrer: 'google.com' });
  });

  test('re-importing the same file lands on the same sessions', async () => {
    const t = await svc.tenant();
    const stored = await firstRun(t.domain, t.siteId);
    await importFirstFile(t.domain, t.siteId);
    const r = await rows(t.siteId);
    expect(r).toHaveLength(4);
    expect(new Set(r.map((x) => x.session_id))).toEqual(new Set([stored[0].session_id]));
  });

  test('an import continues a live session when its visitor is the first-party token live ingest issued', async () => {
    const t = await svc.tenant({ scopes: ['settings:write'] });
    expect((await svc.api('PATCH', `/sites/${t.siteId}/settings`, { token: t.token, body: { session_strategy: 'first_party_cookie' } })).status).toBe(200);
    setClock('2026-04-02T10:00:00Z');
    try {
      const live = await request('POST', `${svc.base}/api/event`, {
        raw: JSON.stringify({ n: 'pageview', u: `https://${t.domain}/live`, d: t.domain }),
        headers: { 'content-type': 'text/plain', 'user-agent': CHROME_MAC, origin: `https://${t.domain}` },
      });
      expect(live.status).toBe(202);
      await svc.admin('events import', { site: t.siteId }, ndjson([line(t.domain, live.body.visitor, '2026-04-02T10:20:00Z', '/imported')]));
      const [stored, imported] = await rows(t.siteId);
      expect(stored).toMatchObject({ pathname: '/live', session_id: live.body.session_id });
      expect(imported).toMatchObject({ pathname: '/imported', visitor_id: live.body.visitor_id, session_id: live.body.session_id,
        session_start: '2026-04-02 10:00:00.000', entry_path: '/live' });
    } finally {
      setClock(null);
    }
  });

  test('an explicit session split across two imports is one session: the stored start, entry page and attributes, counted once; lines before its start are a session of their own', async () => {
    const t = await svc.tenant();
    const explicit = (ts: string, pathname: string, extra: object = {}) => line(t.domain, 'v', ts, pathname, { session: 's1', ...extra });
    await svc.admin('events import', { site: t.siteId }, ndjson([
      explicit('2026-04-01T10:00:00Z', '/a', { referrer: 'https://www.google.com/' }),
      explicit('2026-04-01T10:05:00Z', '/b'),
    ]));
    const stored = await rows(t.siteId);
    await svc.admin('events import', { site: t.siteId }, ndjson([
      explicit('2026-04-01T11:00:00Z', '/c', { referrer: 'https://chatgpt.com/' }), // 55 minutes later: the session string keeps it
      explicit('2026-04-01T09:58:00Z', '/early'), // before the stored start
      line(t.domain, 'v', '2026-04-01T12:00:00Z', '/plain'), // v without a session string, an hour on: a session of its own
    ]));
    const r = await rows(t.siteId);
    expect(r.map((x) => x.pathname)).toEqual(['/early', '/a', '/b', '/c', '/plain']);
    expect(r.filter((x) => x.pathname !== '/early' && x.pathname !== '/c' && x.pathname !== '/plain')).toEqual(stored);
    const s1 = sessionIdFor(t.siteId, 's1', 'v');
    for (const x of r.filter((x) => ['/a', '/b', '/c'].includes(x.pathname))) {
      expect(x).toMatchObject({ session_id: s1, session_start: '2026-04-01 10:00:00.000', entry_path: '/a', referrer: 'google.com', channel: 'Organic Search' });
    }
    // Before the stored start: a session of its own (stored rows are not rewritten, and no session has events before its start).
    const early = r.find((x) => x.pathname === '/early')!;
    expect(early.session_id).not.toBe(s1);
    expect(early).toMatchObject({ session_start: '2026-04-01 09:58:00.000', entry_path: '/early' });
    expect(r.find((x) => x.pathname === '/plain')!.session_id).not.toBe(s1);
    const overview = async (from: string, to: string) =>
      (await svc.api('GET', `/sites/${t.siteId}/overview?from=${from}&to=${to}`, { token: t.token })).body.data;
    // s1 once (the second import's later lines are no second session), /early's, /plain's.
    expect((await overview('2026-04-01T00:00:00Z', '2026-04-01T23:59:59Z')).sessions).toBe(3);
    // A window holding only the early line counts its session.
    expect(await overview('2026-04-01T09:00:00Z', '2026-04-01T09:59:00Z')).toMatchObject({ visitors: 1, views: 1, sessions: 1 });
    // Re-importing the second file lands on the same sessions.
    await svc.admin('events import', { site: t.siteId }, ndjson([explicit('2026-04-01T09:58:00Z', '/early'), explicit('2026-04-01T11:00:00Z', '/c')]));
    const again = await rows(t.siteId);
    expect(again.filter((x) => x.pathname === '/early').map((x) => x.session_id)).toEqual([early.session_id, early.session_id]);
    expect(again.filter((x) => x.pathname === '/c').map((x) => x.session_id)).toEqual([s1, s1]);
  });

  test('stored events of one instant in two sessions: a later line continues the same one on every run (the later-started, then the higher id)', async () => {
    for (let run = 0; run < 3; run++) {
      const t = await svc.tenant();
      await svc.admin('events import', { site: t.siteId }, ndjson([
        line(t.domain, 'v', '2026-04-01T10:00:00Z', '/a', { session: 'a' }),
        line(t.domain, 'v', '2026-04-01T10:00:00Z', '/b', { session: 'b' }),
      ]));
      await svc.admin('events import', { site: t.siteId }, ndjson([line(t.domain, 'v', '2026-04-01T10:05:00Z', '/later')]));
      const ids = [sessionIdFor(t.siteId, 'a', 'v'), sessionIdFor(t.siteId, 'b', 'v')].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1));
      expect((await rows(t.siteId)).find((x) => x.pathname === '/later')!.session_id).toBe(ids[1]);
    }
  });

  test('an import cut into many passes gives the sessions one pass gives: stored continuations, gaps, explicit sessions', async () => {
    const lines = (domain: string) => ndjson([
      line(domain, 'v', '2026-04-01T10:20:00Z', '/c'), // continues v's stored session (10:00-10:10)
      line(domain, 'v', '2026-04-01T11:30:00Z', '/gap', { referrer: 'https://chatgpt.com/' }), // new session
      line(domain, 'v', '2026-04-01T10:25:00Z', '/own', { session: 's1' }), // v's explicit session stays apart
      line(domain, 'v', '2026-04-01T11:35:00Z', '/own2', { session: 's1' }),
      line(domain, 'v', '2026-04-01T10:27:00Z', '/c2'), // after /own, still the stored session
      line(domain, 'w', '2026-04-01T10:21:00Z', '/w1', { referrer: 'https://news.ycombinator.com/' }),
      line(domain, 'w', '2026-04-01T10:22:00Z', '/w2'),
      line(domain, 'x', '2026-04-01T09:00:00Z', '/x1', { session: 's2' }),
      line(domain, 'y', '2026-04-01T09:00:00Z', '/y1'),
      line(domain, 'y', '2026-04-01T09:40:00Z', '/y2'),
    ]);
    const shape = async (siteId: string) => {
      const r = await rows(siteId);
      const firstSeen = new Map<string, number>();
      r.forEach((x, i) => firstSeen.has(x.session_id) || firstSeen.set(x.session_id, i));
      return r.map((x) => ({ pathname: x.pathname, session: firstSeen.get(x.session_id), start: x.session_start, entry: x.entry_path, channel: x.channel }));
    };
    const shapes = [];
    for (const linesPerPass of [undefined, 1, 2]) {
      const t = await svc.tenant();
      await importFirstFile(t.domain, t.siteId);
      const site = (await svc.running.ctx.repos.getSite(t.siteId))!;
      const out = await importEvents(svc.running.ctx.store, geoLookup(), site, Readable.from([lines(t.domain)]), { linesPerPass });
      expect(out).toEqual({ imported: 10, rejected: 0, errors: [] });
      shapes.push(await shape(t.siteId));
    }
    // By ts: /x1 /y1 /y2 (40 min later) /a /b (stored) /c /w1 /w2 /own /c2 /gap /own2.
    expect(shapes[0].map((x) => x.session)).toEqual([0, 1, 2, 3, 3, 3, 6, 6, 8, 3, 10, 8]);
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);
  });
});

test('an import cut by shutdown between its passes stores nothing, so running it again stores each event once', async () => {
  const t = await svc.tenant();
  const site = (await svc.running.ctx.repos.getSite(t.siteId))!;
  const store = svc.running.ctx.store;
  const file = ndjson(Array.from({ length: 12 }, (_, i) => ({
    ts: `2026-03-02T10:${String(i).padStart(2, '0')}:00Z`, name: 'pageview', url: `https://${t.domain}/p${i}`, visitor: `v${i % 6}`,
  })));
  // A signal that reads as aborted from its second look on: the import stops after its first pass.
  let looks = 0;
  const shutdown = { get aborted() { return looks++ > 0; } } as AbortSignal;
  const cut = importEvents(store, geoLookup(), site, Readable.from([file]), { linesPerPass: 2, signal: shutdown });
  await expect(cut).rejects.toMatchObject({ status: 503, code: 'shutting_down', message: expect.stringContaining('before any of its events were stored') });
  expect(await rows(t.siteId)).toEqual([]);
  const leftover = async (table: string) => (await store.query<{ n: number }>(
    `SELECT toUInt32(count()) AS n FROM ${store.table(table)} WHERE site_id = {s:UUID}`, { s: t.siteId }))[0].n;
  expect([await leftover('import_staging'), await leftover('import_output')]).toEqual([0, 0]);

  expect(await importEvents(store, geoLookup(), site, Readable.from([file]), { linesPerPass: 2 })).toEqual({ imported: 12, rejected: 0, errors: [] });
  const stored = await rows(t.siteId);
  expect(stored.map((r) => r.pathname).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `/p${i}`).sort());
  const overview = await svc.api('GET', `/sites/${t.siteId}/overview?from=2026-03-02T00:00:00Z&to=2026-03-03T00:00:00Z`, { token: t.token });
  expect([overview.body.data.views, overview.body.data.visitors]).toEqual([12, 6]);
});
