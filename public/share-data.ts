import type { AppContext } from '../api/context';
import { rangeMeta, type ResolvedWindow } from '../model/notes-window';
import { SECTIONS, type Panels } from '../model/share';
import type { LiveBoard } from './share';

/**
 * What a share board shows, assembled from the query helper's reports. Only enabled sections are
 * computed and sent: a disabled section's figures never leave the server.
 */
export async function boardData(_app: AppContext, board: LiveBoard, panels: Panels, window: ResolvedWindow) {
  const enabled = SECTIONS.filter((s) => panels[s]);
  return {
    label: board.row.label,
    site: { name: board.site.name, domain: board.site.domain },
    range: rangeMeta(window),
    max_range_days: board.row.max_range_days,
    panels: enabled,
  };
}
