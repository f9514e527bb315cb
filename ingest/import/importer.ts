import { randomUUID } from 'node:crypto';
import { shuttingDown } from '../../core/errors';
import type { Readable } from 'node:stream';
import { rollupFeeder } from '../../clickhouse/feeder';
import type { Store } from '../../clickhouse/store';
import type { GeoLookup } from '../enrich/geo';
import { enrichEvent, EVENT_COLUMNS, SESSION_ATTRIBUTES, type SiteRef } from '../event';
import { hash64, sessionIdFor, visitorIdFor } from '../hash';
import { SESSION_GAP_MS } from '../live/sessions';
import { parseImportLine, type ImportedEvent } from './line';
import { boundedLines } from './lines';

/**
 * `tally events import`: stream NDJSON, enrich each good line exactly as live ingest would, stage
 * the rows in ClickHouse, then cut sessions (continuing the visitors' stored sessions) and copy
 * session attributes there with INSERT ... SELECT (window functions) in passes of bounded size, so
 * memory stays flat whatever the file size. Bad lines are counted and the first ten reported with
 * their line numbers; good lines import regardless.
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

/**
 * `signal`: the server is shutting down. The import stops before its next pass and stores nothing
 * (its passes write to import_output; only the last step copies them into events, and that step is
 * waited for).
 */
interface ImportOptions {
  linesPerPass?: number;
  signal?: AbortSignal;
}

export async function importEvents(
  store: Store, geo: GeoLookup, site: SiteRef, body: Readable, opts: ImportOptions = {},
): Promise<ImportResult> {
  const linesPerPass = opts.linesPerPass ?? LINES_PER_PASS;
  const importId = randomUUID();
  const result: ImportResult = { imported: 0, rejected: 0, errors: [] };
  let chunk: object[] = [];
  const reject = (line: number, message: string) => {
    result.rejected++;
    if (result.errors.length < MAX_REPORTED) result.errors.push({ line, message });
  };
  let lineNo = 0;
  let explicitLines = 0;
  const span = { min: Infinity, max: -Infinity };
  try {
    for await (const read of boundedLines(body, MAX_LINE)) {
      lineNo++;
      if (read.tooLong) { reject(lineNo, `line is longer than ${MAX_LINE} bytes`); continue; }
      if (read.notUtf8) { reject(lineNo, 'line is not valid UTF-8 text'); continue; }
      // A byte-order mark some editors write at the start of a UTF-8 file is not part of line 1.
      const text = lineNo === 1 && read.text.charCodeAt(0) === 0xfeff ? read.text.slice(1) : read.text;
      if (!text.trim()) continue;
      const parsed = parseImportLine(text);
      if (typeof parsed === 'string') { reject(lineNo, parsed); continue; }
      const ts = Number(parsed.input.ts); // a Date or epoch ms
      if (ts < span.min) span.min = ts;
      if (ts > span.max) span.max = ts;
      chunk.push({
        import_id: importId, line: lineNo,
        session_key: parsed.session !== undefined ? sessionIdFor(site.id, parsed.session, parsed.visitor) : '0',
        visitor_id: derivedVisitor(site.id, parsed),
        ...enrichEvent(parsed.input, site, geo),
      });
      result.imported++;
      if (parsed.session !== undefined) explicitLines++;
      if (chunk.length >= CHUNK) { await store.insert('import_staging', chunk); chunk = []; }
    }
    await store.insert('import_staging', chunk);
    if (result.imported > 0) {
      for (const [explicit, lines] of [[false, result.imported - explicitLines], [true, explicitLines]] as const) {
        const passes = Math.ceil(lines / linesPerPass);
        for (let pass = 0; pass < passes; pass++) {
          if (opts.signal?.aborted) throw cutByShutdown();
          await store.command(sessionizeSql(store), { imp: importId, site: site.id, explicit, passes, pass });
        }
      }
      if (opts.signal?.aborted) throw cutByShutdown();
      const feeder = rollupFeeder(store);
      await feeder.write({ siteIds: [site.id], minTs: span.min, maxTs: span.max }, () =>
        store.command(`INSERT INTO ${store.table('events')} (${OUTPUT_COLUMNS}) SELECT ${OUTPUT_COLUMNS}
          FROM ${store.table('import_output')} WHERE import_id = {imp:UUID}`, { imp: importId }));
      // The import is done when its events count in every report.
      await feeder.catchUp();
    }
  } finally {
    for (const table of ['import_staging', 'import_output']) {
      await store.command(`DELETE FROM ${store.table(table)} WHERE import_id = {imp:UUID}`, { imp: importId }).catch(() => undefined);
    }
  }
  return result;
}

const cutByShutdown = () => shuttingDown('the import was stopped before any of its events were stored; run it again once the server is back');

/**
 * Lines cut into sessions per INSERT ... SELECT. The window functions' memory grows with the rows
 * they see (over 300 MB for 250,000 lines, in the service's own process under chDB; spilling sorts
 * to disk did not bound it), so a large import is cut in passes, each over the visitors (and explicit
 * sessions) whose hash falls in its bucket: a session never spans two passes, and memory stays near
 * one pass's worth whatever the file size.
 */
const LINES_PER_PASS = 100_000;

/** What a session hands to each of its events besides its id: start, entry page, first-event attributes. */
const CARRIED: readonly string[] = ['session_start', 'entry_path', 'entry_hostname', ...SESSION_ATTRIBUTES];
const SESSION_FIELDS = ['session_id', ...CARRIED];
/** The event's own columns: every column of events (ingest/event's compile-checked list) but the session's. */
const OWN = EVENT_COLUMNS.filter((c) => !SESSION_FIELDS.includes(c));
const OUTPUT_COLUMNS = [...OWN, ...SESSION_FIELDS].join(', ');

/**
 * Sessions per visitor, continuing the visitor's stored sessions (docs/COLLECTION.md "Sessions"):
 * the import's lines without `session` are merged, per visitor, with that visitor's stored events of
 * the site from 30 minutes before the import's first line to its last, in ts order (a stored event
 * first on a tie, then line order). A gap of 30 minutes or more starts a new segment, and every stored
 * event starts a new run within its segment. A run led by a stored event is that stored session's
 * continuation: its imported events take the stored session id, start and attributes. A run led by an
 * imported line is a new session whose id hashes site, visitor and first timestamp (re-importing a
 * file gives the same ids) and whose attributes are its first line's. Stored rows are only read, never
 * rewritten. Lines with an explicit `session` keep it whatever the gaps; when an earlier import
 * stored that session, those from its start on continue it (its id, start and attributes), so a
 * session split across two files is one session in every report; those dated before its start are a
 * session of their own, as visitor-cut lines before a stored session are.
 *
 * One INSERT ... SELECT of window functions, so ClickHouse sorts (and may spill) instead of Node
 * holding rows; the stored side is read through the primary key (site, date range).
 */
function sessionizeSql(store: Store): string {
  return `
INSERT INTO ${store.table('import_output')} (import_id, ${OUTPUT_COLUMNS})
SELECT {imp:UUID}, ${[...OWN, ...SESSION_FIELDS.map((f) => `run_${f}`)].join(', ')}
FROM (${runsSql(store)})
WHERE from_import`;
}

/** This pass's share of the lines: sessions are cut per visitor, or per explicit session. */
const IMPORTED_BUCKET = `(session_key != 0) = {explicit:Bool}
      AND cityHash64(if(session_key = 0, visitor_id, session_key)) % {passes:UInt32} = {pass:UInt32}`;

/**
 * Imported lines and stored events of the same visitors, as one stream sharing column names (own_*:
 * the session fields the row would hand on if it led a run). Lines with an explicit session are
 * partitioned by that session alone (visitor 0); the visitors' stored rows carry session_key 0, so
 * never join them. An explicit session an earlier import stored is represented by its earliest stored
 * row (its start), keyed by the session: lines from it on continue the stored session; lines dated
 * before it are a session of their own (id hashed from the session and their first timestamp), since
 * stored rows are never rewritten and a session must not have events before its start.
 */
function mergedSql(store: Store): string {
  const staging = store.table('import_staging');
  const ofImport = 'import_id = {imp:UUID}';
  const imported = `SELECT 1 AS from_import, line, session_key, if(session_key = 0, visitor_id, 0) AS partition_visitor,
      ${OWN.join(', ')}, 0 AS own_session_id, ts AS own_session_start, pathname AS own_entry_path, hostname AS own_entry_hostname,
      ${SESSION_ATTRIBUTES.map((a) => `${a} AS own_${a}`).join(', ')}
    FROM ${staging} WHERE ${ofImport} AND ${IMPORTED_BUCKET}`;
  // Only stored events that can precede an imported line by less than 30 minutes matter.
  const stored = `SELECT 0, 0, 0, visitor_id, ${OWN.join(', ')}, ${SESSION_FIELDS.join(', ')}
    FROM ${store.table('events')}
    WHERE site_id = {site:UUID}
      AND ts >= (SELECT min(ts) FROM ${staging} WHERE ${ofImport}) - toIntervalMillisecond(${SESSION_GAP_MS})
      AND ts <= (SELECT max(ts) FROM ${staging} WHERE ${ofImport})
      AND visitor_id IN (SELECT visitor_id FROM ${staging} WHERE ${ofImport} AND session_key = 0 AND ${IMPORTED_BUCKET})`;
  // An explicit session has no time bound (its lines keep it whatever the gaps), so the site's
  // session ids are scanned; only in the passes over explicit sessions.
  const storedExplicit = `SELECT * FROM (
      SELECT 0, 0, session_id, 0, ${OWN.join(', ')}, ${SESSION_FIELDS.join(', ')}
      FROM ${store.table('events')}
      WHERE {explicit:Bool} AND site_id = {site:UUID}
        AND session_id IN (SELECT session_key FROM ${staging} WHERE ${ofImport} AND session_key != 0 AND ${IMPORTED_BUCKET})
      ORDER BY session_start, ts
      LIMIT 1 BY session_id)`;
  return [imported, stored, storedExplicit].join('\n    UNION ALL\n    ');
}

/** Each row with its run's session fields (run_*): the first row of the run gives them. */
function runsSql(store: Store): string {
  // Stored rows of one instant in two sessions: the later-started one is the one an import continues.
  const order = 'ORDER BY ts, from_import, line, own_session_start, own_session_id';
  const visitor = `PARTITION BY partition_visitor, session_key ${order}`;
  const run = `PARTITION BY partition_visitor, session_key, segment, stored_seen ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING`;
  const first = (col: string) => `first_value(${col}) OVER (${run})`;
  const carried = CARRIED.map((f) => `${first(`own_${f}`)} AS run_${f}`);
  return `
  SELECT *,
    if(session_key != 0,
       if(${first('from_import')} = 0 OR explicit_stored = 0, session_key, cityHash64(session_key, ${first('ts')})),
       if(${first('from_import')} = 0, ${first('own_session_id')}, cityHash64(site_id, visitor_id, ${first('ts')}))) AS run_session_id,
    ${carried.join(',\n    ')}
  FROM (
    SELECT *, sum(gap) OVER (${visitor} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS segment,
      sum(is_stored) OVER (${visitor} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS stored_seen,
      max(is_stored) OVER (PARTITION BY partition_visitor, session_key) AS explicit_stored
    FROM (
      SELECT *, toUInt8(from_import = 0) AS is_stored,
        toUInt8(session_key = 0 AND dateDiff('millisecond', lagInFrame(ts, 1, ts) OVER (${visitor} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), ts) >= ${SESSION_GAP_MS}) AS gap
      FROM (${mergedSql(store)})
    )
  )`;
}
