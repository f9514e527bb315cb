import { randomBytes } from 'node:crypto';
import { isoToCh } from '../../clickhouse/meta';
import { sessionAttributesOf, type EnrichedEvent, type EventRow } from '../event';
import { hash64 } from '../hash';
import type { Identity } from './identity';
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

const continues = (s: SessionState | undefined, tsMs: number): s is SessionState =>
  !!s && tsMs - s.l < SESSION_GAP_MS && tsMs >= s.st - SESSION_GAP_MS;

export function sessionize(items: Sessionable[], loaded: Map<string, SessionState>) {
  const dirty = new Map<string, SessionState>();
  const rows: EventRow[] = [];
  for (const it of items) {
    const known = (k: string) => dirty.get(k) ?? loaded.get(k);
    const found = it.identity.candidates.map((c) => known(c.key)).find((s) => continues(s, it.tsMs));
    const primary = it.identity.candidates[0];
    const state: SessionState = found
      ? { ...found, l: Math.max(found.l, it.tsMs) }
      : {
          v: primary.visitorId,
          s: hash64('live-session', it.event.site_id, primary.visitorId, String(it.tsMs), randomBytes(4).toString('hex')),
          st: it.tsMs,
          l: it.tsMs,
          a: sessionAttributesOf(it.event),
        };
    dirty.set(primary.key, state);
    rows.push({ ...it.event, ...state.a, visitor_id: state.v, session_id: state.s, session_start: isoToCh(new Date(state.st)) });
  }
  return { rows, dirty };
}
