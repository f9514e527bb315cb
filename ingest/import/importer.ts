import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { rollupFeeder } from '../../clickhouse/feeder';
import type { Store } from '../../clickhouse/store';
import type { GeoLookup } from '../enrich/geo';
import { enrichEvent, SESSION_ATTRIBUTES, type SiteRef } from '../event';
import { hash64, sessionIdFor, visitorIdFor } from '../hash';
import { SESSION_GAP_MS } from '../live/sessions';
import { parseImportLine, type ImportedEvent } from './line';

/**
 * `tally events import`: stream NDJSON, enrich each good line exactly as live ingest would, stage
 * the rows in ClickHouse, then cut sessions and copy session attributes there with one
 * INSERT ... SELECT (window functions), so memory stays flat whatever the file size. Bad lines are
 * counted and the first ten reported with their line numbers; good lines import regardless.
 */
export interface ImportResult {
  imported: number;
  rejected: number;
  errors: { line: number; message: string }[];
}

const CHUNK = 10_000;
const MAX_LINE = 64 * 1024;
const MAX_REPORTED = 10;

/** Without `visitor`, the visitor is derived from ip + user agent (see docs/COLLECTION.md). */
const derivedVisitor = (siteId: string, e: ImportedEvent) =>
  e.visitor !== undefined ? visitorIdFor(siteId, e.visitor) : hash64('ip-ua', siteId, e.input.ip ?? '', e.input.userAgent ?? '');

export async function importEvents(store: Store, geo: GeoLookup, site: SiteRef, body: Readable): Promise<ImportResult> {
  const importId = randomUUID();
  const result: ImportResult = { imported: 0, rejected: 0, errors: [] };
  let chunk: object[] = [];
  const reject = (line: number, message: string) => {
    result.rejected++;
    if (result.errors.length < MAX_REPORTED) result.errors.push({ line, message });
  };
  let lineNo = 0;
  const span = { min: Infinity, max: -Infinity };
  try {
    for await (const text of createInterface({ input: body, crlfDelay: Infinity })) {
      lineNo++;
      if (!text.trim()) continue;
      if (text.length > MAX_LINE) { reject(lineNo, `line is longer than ${MAX_LINE} characters`); continue; }
      const parsed = parseImportLine(text);
      if (typeof parsed === 'string') { reject(lineNo, parsed); continue; }
      const ts = parsed.input.ts.getTime();
      if (ts < span.min) span.min = ts;
      if (ts > span.max) span.max = ts;
      chunk.push({
        import_id: importId, line: lineNo,
        session_key: parsed.session !== undefined ? sessionIdFor(site.id, parsed.session) : '0',
        visitor_id: derivedVisitor(site.id, parsed),
        ...enrichEvent(parsed.input, site, geo),
      });
      result.imported++;
      if (chunk.length >= CHUNK) { await store.insert('import_staging', chunk); chunk = []; }
    }
    await store.insert('import_staging', chunk);
    if (result.imported > 0) {
      const feeder = rollupFeeder(store);
      await feeder.write({ siteIds: [site.id], minTs: span.min, maxTs: span.max }, () => store.command(sessionizeSql(store), { imp: importId }));
      // The import is done when its events count in every report.
      await feeder.catchUp();
    }
  } finally {
    await store.command(`DELETE FROM ${store.table('import_staging')} WHERE import_id = {imp:UUID}`, { imp: importId }).catch(() => undefined);
  }
  return result;
}

const OWN = ['site_id', 'ts', 'name', 'event_id', 'visitor_id', 'is_bot', 'bot_kind', 'crawler_name', 'crawler_operator',
  'hostname', 'pathname', 'link', 'value_cents', 'props'];

/**
 * Sessions per visitor: a gap of 30 minutes or more starts a new one (lines with an explicit
 * `session` keep it). The session id hashes site, visitor and the session's first timestamp, so
 * re-importing the same file gives the same ids. Every event then takes its session's first-event
 * attributes (ties on ts broken by line order). Output columns are positional: aliases here would
 * shadow the source columns.
 */
function sessionizeSql(store: Store): string {
  const s = 'OVER s';
  const attrs = SESSION_ATTRIBUTES.map((a) => `first_value(${a}) ${s}`);
  const lag = 'PARTITION BY visitor_id, session_key ORDER BY ts, line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW';
  return `
INSERT INTO ${store.table('events')} (${OWN.join(', ')}, session_id, session_start, entry_path, entry_hostname, ${SESSION_ATTRIBUTES.join(', ')})
SELECT ${OWN.join(', ')}, sid, min(ts) ${s}, first_value(pathname) ${s}, first_value(hostname) ${s}, ${attrs.join(', ')}
FROM (
  SELECT *, if(session_key != 0, session_key, cityHash64(site_id, visitor_id, first_ts)) AS sid
  FROM (
    SELECT *, min(ts) OVER (PARTITION BY visitor_id, session_key, seq) AS first_ts
    FROM (
      SELECT *, sum(gap) OVER (${lag}) AS seq
      FROM (
        SELECT *, toUInt8(session_key = 0 AND dateDiff('millisecond', lagInFrame(ts, 1, ts) OVER (${lag}), ts) >= ${SESSION_GAP_MS}) AS gap
        FROM ${store.table('import_staging')} WHERE import_id = {imp:UUID}
      )
    )
  )
)
WINDOW s AS (PARTITION BY sid ORDER BY ts, line ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)`;
}
