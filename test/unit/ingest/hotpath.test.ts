import { createHash, randomBytes } from 'node:crypto';
import proxyaddr from 'proxy-addr';
import { isoToCh } from '../../../clickhouse/meta';
import { BoundedMemo } from '../../../ingest/enrich/memo';
import { cachedTrafficSource, trafficSource } from '../../../ingest/enrich/referrer';
import { cachedPageFields, pageFields, type PageFields } from '../../../ingest/enrich/url';
import {
  chTimestamp, EVENT_COLUMNS, positionalRow, SESSION_KEYS, sessionAttributesOf, type EnrichedEvent, type SessionAttributes,
} from '../../../ingest/event';
import { hash64, visitorIdFor } from '../../../ingest/hash';
import { memoizedTrust } from '../../../ingest/live/handler';
import { randomBase64url, randomHex } from '../../../ingest/live/random';
import { decodeState, encodeState, type SessionState } from '../../../ingest/live/sessions';

/**
 * The per-event fast paths (docs/PERFORMANCE.md, "JavaScript per event") against the plain
 * computations they replace: same ids, same timestamps, same column order, same session state text.
 */

/** The hashing before crypto.hash: stored ids must never change. */
const referenceHash64 = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\x1f')).digest().readBigUInt64BE(0).toString();

describe('hash64', () => {
  test('gives the ids it always gave', () => {
    expect(visitorIdFor('site-1', 'abcDEF123_-x')).toBe('1848421802252923601');
    expect(hash64('day', 'salt', 's', '1.2.3.4', 'Mozilla/5.0 é ü 漢字 🙂')).toBe('4548256751379606292');
  });

  test('matches createHash over random parts, including non-ASCII and leading-zero digests', () => {
    for (let i = 0; i < 2000; i++) {
      const parts = [randomBytes(8).toString('hex'), `ü${i}`, randomBytes(3).toString('base64'), '🙂'.repeat(i % 3)];
      expect(hash64(...parts)).toBe(referenceHash64(...parts));
    }
  });
});

describe('chTimestamp', () => {
  const reference = (ms: number) => isoToCh(new Date(ms));

  test('formats like isoToCh across seconds, milliseconds and the cache boundary', () => {
    const base = Date.UTC(2026, 10, 21, 23, 59, 58, 0);
    for (let ms = base - 5; ms < base + 2500; ms += 7) expect(chTimestamp(ms)).toBe(reference(ms));
    for (const ms of [0, 1, 9, 10, 99, 100, 999, 1000, Date.UTC(9999, 11, 31, 23, 59, 59, 999)]) expect(chTimestamp(ms)).toBe(reference(ms));
    // Going back to an earlier second must not reuse the later one's prefix.
    expect(chTimestamp(base + 1500)).toBe(reference(base + 1500));
    expect(chTimestamp(base + 5)).toBe(reference(base + 5));
  });

  test('falls back to isoToCh outside the plain four-digit years and for fractions', () => {
    for (const ms of [-1, -86_400_001, Date.UTC(10000, 0, 1), 1700000000000.5]) expect(chTimestamp(ms)).toBe(reference(ms));
  });
});

const ATTRIBUTE_KEYS = SESSION_KEYS as readonly string[];

function sampleEvent(): EnrichedEvent {
  const e: Record<string, unknown> = {};
  for (const c of EVENT_COLUMNS) e[c] = `event:${c}`;
  e.is_bot = 1;
  e.value_cents = 4900;
  e.props = { plan: 'pro' };
  return e as unknown as EnrichedEvent;
}

describe('positionalRow and sessionAttributesOf', () => {
  test('the row holds every column in EVENT_COLUMNS order, from the event, the session or its attributes', () => {
    const attributes = Object.fromEntries(ATTRIBUTE_KEYS.map((k) => [k, `attr:${k}`])) as unknown as SessionAttributes;
    const event = sampleEvent();
    const row = positionalRow(event, { visitor_id: 'v1', session_id: 's1', session_start: '2026-01-01 00:00:00.000', attributes });
    expect(row).toHaveLength(EVENT_COLUMNS.length);
    const session: Record<string, unknown> = { visitor_id: 'v1', session_id: 's1', session_start: '2026-01-01 00:00:00.000' };
    EVENT_COLUMNS.forEach((c, i) => {
      const expected = c in session ? session[c] : ATTRIBUTE_KEYS.includes(c) ? `attr:${c}` : (event as unknown as Record<string, unknown>)[c];
      expect([c, row[i]]).toEqual([c, expected]);
    });
  });

  test('an event gives its session exactly the SESSION_KEYS, entry fields from its page', () => {
    const event = sampleEvent();
    const a = sessionAttributesOf(event) as unknown as Record<string, unknown>;
    expect(Object.keys(a).sort()).toEqual([...ATTRIBUTE_KEYS].sort());
    expect(a.entry_path).toBe('event:pathname');
    expect(a.entry_hostname).toBe('event:hostname');
    for (const k of ATTRIBUTE_KEYS.filter((x) => !x.startsWith('entry_'))) expect(a[k]).toBe(`event:${k}`);
  });
});

describe('session state text', () => {
  const state: SessionState = {
    v: '1848421802252923601', s: '4548256751379606292', st: 1_700_000_000_000, l: 1_700_000_060_000,
    a: Object.fromEntries(ATTRIBUTE_KEYS.map((k, i) => [k, `${k}-${i}-"é"`])) as unknown as SessionAttributes,
  };

  test('is the array [v, s, st, l, ...attributes in SESSION_KEYS order] it always was', () => {
    const a = state.a as unknown as Record<string, unknown>;
    expect(encodeState(state)).toBe(JSON.stringify([state.v, state.s, state.st, state.l, ...SESSION_KEYS.map((k) => a[k])]));
  });

  test('decodes to the state it encodes', () => {
    expect(decodeState(encodeState(state))).toEqual(state);
  });
});

describe('enrichment memos', () => {
  const urls = [
    'https://shop.example/', 'https://www.shop.example/p/caf%C3%A9?utm_source=Google&utm_medium=cpc&utm_campaign=Spring%20Shop',
    'https://shop.example/a#/route', 'https://shop.example/b?gclid=abc', 'https://shop.example/c?gad_campaignid=7&utm_source=newsletter',
    'https://blog.shop.example/x?utm_source=chatgpt.com', 'https://shop.example/d?utm_medium=email',
  ];
  const referrers = [undefined, '', 'https://www.google.com/', 'https://news.ycombinator.com/item?id=1', 'https://shop.example/other',
    'https://t.co/x', 'https://chatgpt.com/', 'not a url', 'https://m.youtube.com/watch'];

  test('cached page fields equal the parsed ones, in both hash modes, on a miss and on a hit', () => {
    for (let round = 0; round < 2; round++) {
      for (const u of urls) {
        for (const hashMode of [false, true]) expect(cachedPageFields(new URL(u), hashMode)).toEqual(pageFields(new URL(u), hashMode));
      }
    }
  });

  test('cached traffic sources equal the computed ones, on a miss and on a hit', () => {
    for (let round = 0; round < 2; round++) {
      for (const u of urls) {
        const page = pageFields(new URL(u));
        for (const r of referrers) {
          for (const domain of ['shop.example', 'other.example']) expect(cachedTrafficSource(page, r, domain)).toEqual(trafficSource(page, r, domain));
        }
      }
    }
  });

  test('no two inputs share a traffic-source entry, whatever characters the fields hold', () => {
    const page = pageFields(new URL('https://a.example/'));
    // With a plain \x1f separator these two would make the same key: ...a\x1fb\x1f\x1f...
    const one: PageFields = { ...page, utm_source: 'a\x1fb', utm_medium: '' };
    const two: PageFields = { ...page, utm_source: 'a', utm_medium: 'b\x1f' };
    expect(cachedTrafficSource(one, 'https://google.com/', 'a.example')).toEqual(trafficSource(one, 'https://google.com/', 'a.example'));
    expect(cachedTrafficSource(two, 'https://google.com/', 'a.example')).toEqual(trafficSource(two, 'https://google.com/', 'a.example'));
    expect(trafficSource(one, 'https://google.com/', 'a.example')).not.toEqual(trafficSource(two, 'https://google.com/', 'a.example'));
  });

  test('a memo never holds more than its limit, oldest out first', () => {
    const memo = new BoundedMemo<number>(3);
    for (let i = 0; i < 10; i++) memo.set(`k${i}`, i);
    expect(memo.size).toBe(3);
    expect(memo.get('k6')).toBeUndefined();
    expect([memo.get('k7'), memo.get('k8'), memo.get('k9')]).toEqual([7, 8, 9]);
  });
});

describe('memoizedTrust', () => {
  const addresses = ['127.0.0.1', '127.0.0.1', '10.1.2.3', '::1', '::ffff:127.0.0.1', '192.168.0.9', '2001:db8::1', 'not-an-ip', '127.0.0.1'];

  test('gives the compiled trust function\'s verdicts', () => {
    for (const list of [['loopback'], ['10.0.0.0/8', '::1'], [] as string[], ['uniquelocal', 'linklocal']]) {
      const compiled = proxyaddr.compile(list);
      const memo = memoizedTrust(compiled);
      for (let i = 0; i < addresses.length; i++) expect([list, addresses[i], memo(addresses[i], i)]).toEqual([list, addresses[i], compiled(addresses[i], i)]);
    }
  });

  test('stays bounded and keeps answering right past its limit', () => {
    const compiled = proxyaddr.compile(['10.0.0.0/8']);
    const memo = memoizedTrust(compiled, 4);
    for (let i = 0; i < 50; i++) {
      const addr = `${i % 2 ? 10 : 11}.0.0.${i}`;
      expect(memo(addr, 0)).toBe(compiled(addr, 0));
    }
  });
});

describe('pooled random values', () => {
  test('have the length and alphabet of randomBytes(n).toString(...), and never repeat across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      // 4-byte tags cross the 4096-byte pool's end many times; 12-byte tokens cross it unaligned.
      const tag = randomHex(4);
      const token = randomBase64url(12);
      expect(tag).toMatch(/^[0-9a-f]{8}$/);
      expect(token).toMatch(/^[A-Za-z0-9_-]{16}$/);
      seen.add(token);
    }
    expect(seen.size).toBe(5000);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });
});
