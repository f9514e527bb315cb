import { isoToCh } from '../../clickhouse/meta';
import { positionalRow, sessionAttributesOf, type EnrichedEvent } from '../event';
import { hash64 } from '../hash';
import type { Identity } from './identity';
import { randomHex } from './random';
import { SESSION_GAP_MS, type SessionState } from './sessions';

/**
 * Assign each event of a batch to a session, in arrival order: continue the first candidate identity
 * whose session saw an event less than 30 minutes ago, else start a new session with this event's
 * attributes. Every event takes its session's visitor id, start and first-event attributes. Returns
 * the rows and the session states to write back (filed under the current identity).
 */
export interface Sessionable {
  event: EnrichedEvent;
  identity: Identity;
  tsMs: number;
}

/** The visitor's session goes on at tsMs: its last event was less than 30 minutes before. */
const continues = (s: SessionState | undefined, tsMs: number): s is SessionState =>
  !!s && tsMs - s.l < SESSION_GAP_MS && tsMs >= s.st - SESSION_GAP_MS;

export interface SessionizedBatch {
  /** Positional rows (EVENT_COLUMNS order), ready to insert. */
  rows: unknown[][];
  ids: { visitor_id: string; session_id: string }[];
  /** States to write back, filed under each event's current identity. */
  dirty: Map<string, SessionState>;
}

/**
 * The session a visitor's event at tsMs continues: the first of its identity's candidates (current
 * key, then the previous salt period's) whose state goes on, this batch's own states before stored ones.
 */
export function findSession(
  candidates: Identity['candidates'], tsMs: number, dirty: ReadonlyMap<string, SessionState>, loaded: ReadonlyMap<string, SessionState>,
): SessionState | undefined {
  for (const c of candidates) {
    const s = dirty.get(c.key) ?? loaded.get(c.key);
    if (continues(s, tsMs)) return s;
  }
  return undefined;
}

function newSession(it: Sessionable): SessionState {
  const visitorId = it.identity.candidates[0].visitorId;
  const tag = randomHex(4);
  return {
    v: visitorId, s: hash64('live-session', it.event.site_id, visitorId, String(it.tsMs), tag), st: it.tsMs, l: it.tsMs,
    a: sessionAttributesOf(it.event),
  };
}

export function sessionize(items: Sessionable[], loaded: Map<string, SessionState>): SessionizedBatch {
  const dirty = new Map<string, SessionState>();
  const rows: unknown[][] = [];
  const ids: SessionizedBatch['ids'] = [];
  const starts = new Map<number, string>();
  for (const it of items) {
    const found = findSession(it.identity.candidates, it.tsMs, dirty, loaded);
    const state = found ?? newSession(it);
    if (found) found.l = Math.max(found.l, it.tsMs);
    dirty.set(it.identity.candidates[0].key, state);
    let start = starts.get(state.st);
    if (start === undefined) starts.set(state.st, (start = isoToCh(new Date(state.st))));
    rows.push(positionalRow(it.event, { visitor_id: state.v, session_id: state.s, session_start: start, attributes: state.a }));
    ids.push({ visitor_id: state.v, session_id: state.s });
  }
  return { rows, ids, dirty };
}
