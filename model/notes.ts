import { chToIso, chToMs, isoToCh, MetaTable, nowCh } from '../clickhouse/meta';
import type { Store } from '../clickhouse/store';
import type { Site } from '../core/domain';
import { invalidRequest } from '../core/errors';
import { newId } from '../core/ids';
import { instantMs } from '../core/instant';
import { dayStart, isoSecondsInZone, localDate, type ResolvedWindow } from './notes-window';
import { fetchSize } from '../core/paging';

/**
 * Notes annotate a site's timeline. A `minute` note is pinned to its instant; a `date` note is pinned
 * to a calendar day (occurred_date), fixed at creation from the site's timezone then, so a later
 * timezone change never moves it to another day.
 */
export type Granularity = 'date' | 'minute';

export interface NoteRow {
  id: string; site_id: string; body: string; granularity: Granularity; occurred_at: string;
  occurred_date: string | null; author_id: string | null; created_at: string; updated_at: string;
}

export interface Note {
  id: string; body: string; granularity: Granularity; occurred_at: string; author_id: string | null;
  created_at: string; updated_at: string;
}

const COLUMNS: (keyof NoteRow & string)[] = [
  'id', 'site_id', 'body', 'granularity', 'occurred_at', 'occurred_date', 'author_id', 'created_at', 'updated_at',
];

/** The instant a note sits at: a date note at local midnight of its day in the given zone. */
const EFFECTIVE = (tzParam: string) =>
  `if(granularity = 'date', toDateTime64(assumeNotNull(occurred_date), 3, {${tzParam}:String}), occurred_at)`;

/** The years a note may sit in: a date note's day is a Date32 (1900-01-01 to 2299-12-31). */
export const NOTE_YEARS = { fromMs: Date.UTC(1900, 0, 1), toMs: Date.UTC(2300, 0, 1), words: 'must lie between 1900 and 2299' };
const NOTE_DAYS = { first: localDate(NOTE_YEARS.fromMs, 'UTC'), last: localDate(NOTE_YEARS.toMs - 1, 'UTC') };

/**
 * A date note's day in the site's zone. An instant inside NOTE_YEARS can fall on a day outside them
 * (1900-01-01T03:00Z is 1899-12-31 in New York), which the column would silently clamp to another day
 * than the one answered: refused.
 */
function noteDay(occurredMs: number, timezone: string): string {
  const day = localDate(occurredMs, timezone);
  if (day < NOTE_DAYS.first || day > NOTE_DAYS.last) {
    throw invalidRequest(`occurred_at: falls on ${day} in the site's timezone (${timezone}); a date note's day ${NOTE_YEARS.words}`);
  }
  return day;
}

export class NotesRepo {
  private readonly table: MetaTable<NoteRow>;

  constructor(store: Store) {
    this.table = new MetaTable(store, 'notes', COLUMNS);
  }

  async create(site: Site, input: { body: string; occurred_at: string; granularity: Granularity }, authorId: string): Promise<NoteRow> {
    const at = nowCh();
    const occurredMs = instantMs(input.occurred_at);
    return this.table.put({
      id: newId(), site_id: site.id, body: input.body, granularity: input.granularity, occurred_at: isoToCh(new Date(occurredMs)),
      occurred_date: input.granularity === 'date' ? noteDay(occurredMs, site.timezone) : null,
      author_id: authorId, created_at: at, updated_at: at,
    });
  }

  get(siteId: string, id: string): Promise<NoteRow | undefined> {
    return this.table.ofSite(siteId, id);
  }

  /** The note with its new body; undefined when the site has no such note. */
  update(siteId: string, id: string, body: string): Promise<NoteRow | undefined> {
    return this.table.editOfSite(siteId, id, (row) => this.table.put({ ...row, body, updated_at: nowCh() }));
  }

  /** true, or undefined when the site has no such note. */
  remove(siteId: string, id: string): Promise<true | undefined> {
    return this.table.removeOfSite(siteId, id);
  }

  /** When the site's earliest note happened, read in tz (date notes at that day's midnight); null without notes. */
  async earliest(site: Site, tz: string): Promise<number | null> {
    const [row] = await this.table.select('site_id = {s:UUID}', { s: site.id, wtz: tz }, `ORDER BY ${EFFECTIVE('wtz')} ASC LIMIT 1`);
    if (!row) return null;
    return row.granularity === 'date' && row.occurred_date ? dayStart(row.occurred_date, tz) : chToMs(row.occurred_at);
  }

  /**
   * Newest first by when the note happened. With a window, a minute note counts when its instant is
   * in [from, to); a date note when its day's midnight in the window's zone is, so a day-note shows
   * on the day it names whatever zone the viewer uses.
   */
  list(site: Site, page: { limit: number; offset: number }, window?: ResolvedWindow): Promise<NoteRow[]> {
    const params: Record<string, unknown> = {
      s: site.id, stz: site.timezone, lim: fetchSize(page), off: page.offset,
    };
    let where = 'site_id = {s:UUID}';
    if (window) {
      Object.assign(params, { from: isoToCh(new Date(window.fromMs)), to: isoToCh(new Date(window.toMs)), wtz: window.tz });
      where += ` AND ${EFFECTIVE('wtz')} >= {from:DateTime64(3)} AND ${EFFECTIVE('wtz')} < {to:DateTime64(3)}`;
    }
    return this.table.select(where, params, `ORDER BY ${EFFECTIVE('stz')} DESC, created_at DESC, id DESC LIMIT {lim:UInt32} OFFSET {off:UInt64}`);
  }
}

/**
 * The API shape. A date note's occurred_at is local midnight of its day in the site's current
 * timezone, written with that zone's offset, so its calendar date reads the same in the string and
 * in the site's zone. The author is shown only while still a member of the organisation.
 */
export function noteOut(row: NoteRow, site: Site, members: ReadonlySet<string>): Note {
  let occurred = chToIso(row.occurred_at)!;
  if (row.granularity === 'date' && row.occurred_date) {
    occurred = isoSecondsInZone(dayStart(row.occurred_date, site.timezone), site.timezone);
  }
  return {
    id: row.id, body: row.body, granularity: row.granularity, occurred_at: occurred,
    author_id: row.author_id && members.has(row.author_id) ? row.author_id : null,
    created_at: chToIso(row.created_at)!, updated_at: chToIso(row.updated_at)!,
  };
}
