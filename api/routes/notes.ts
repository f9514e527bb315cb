import { z } from 'zod';
import { prose } from '../../core/fields';
import { instantString } from '../../core/instant';
import { NOTE_YEARS, NotesRepo, noteOut, type Note } from '../../model/notes';
import { hasWindow, rangeMeta, refineWindow, resolveWindow, spelledZone, windowShape } from '../../model/notes-window';
import type { AppContext } from '../context';
import { PageMeta, RangeMeta, Timestamp } from '../openapi';
import { paged, pagingShape } from '../paging';
import { byPathId, type RouteRegistrar } from '../route';

// List rows show both timestamps; create answers show created_at, edit answers updated_at (spec "Note").
const NoteOut = z.object({
  id: z.string().uuid(), body: z.string(), granularity: z.enum(['date', 'minute']), occurred_at: Timestamp,
  author_id: z.string().uuid().nullable(), created_at: Timestamp, updated_at: Timestamp,
});
const CreatedNote = NoteOut.omit({ updated_at: true });
const EditedNote = NoteOut.omit({ created_at: true });

const noteBody = prose(z.string({ error: 'is required and must be a string' }).trim().min(1, 'must not be empty').max(10_000, 'allows at most 10000 characters'));

// Strict: `site_id` or any other unexpected field is refused; the site comes from the path.
const CreateNote = z.strictObject({
  body: noteBody,
  occurred_at: instantString(NOTE_YEARS).openapi({ format: 'date-time' }),
  granularity: z.enum(['date', 'minute'], { error: 'must be date or minute' }).default('date'),
});

const EditNote = z.strictObject({ body: noteBody });

const ListQuery = z.object({ ...windowShape, ...pagingShape }).superRefine(refineWindow);

async function members(app: AppContext, orgId: string): Promise<Set<string>> {
  const rows = await app.repos.memberships.select('org_id = {o:UUID}', { o: orgId });
  return new Set(rows.map((m) => m.user_id));
}

const without = (n: Note, field: 'created_at' | 'updated_at') => {
  const { [field]: _omit, ...rest } = n;
  return rest;
};

export default function notesRoutes(r: RouteRegistrar): void {
  r.route({
    method: 'get', path: '/sites/{siteId}/notes', summary: 'Notes, newest first; filtered by occurred_at with a window',
    tag: 'notes', scope: 'notes:read', query: ListQuery, response: z.array(NoteOut),
    meta: { page: PageMeta, range: RangeMeta.optional() },
    async handler({ app, principal, site, query: asked }) {
      const query = await spelledZone(app.store, asked);
      const repo = new NotesRepo(app.store);
      // `all` starts at the earliest note, as a report's starts at the earliest event: a backfilled
      // note before the retention cutoff then makes the window clamped, not silently narrower.
      const allFrom = query.period === 'all' ? await repo.earliest(site, query.tz) : null;
      const window = hasWindow(query) ? resolveWindow(query, 'last30d', principal.retentionDays, allFrom) : undefined;
      const rows = await repo.list(site, query, window);
      const team = await members(app, site.org_id);
      const out = paged(rows.map((row) => noteOut(row, site, team)), query);
      // meta.range only when a window was asked for; without one the newest notes come back.
      return window ? { data: out.data, meta: { ...out.meta, range: rangeMeta(window) } } : out;
    },
  });

  r.route({
    method: 'post', path: '/sites/{siteId}/notes', summary: 'Create a note (the author is the key\'s creator)', status: 201,
    tag: 'notes', scope: 'notes:write', body: CreateNote, response: CreatedNote,
    async handler({ app, principal, site, body }) {
      const row = await new NotesRepo(app.store).create(site, body, principal.userId);
      const note = noteOut(row, site, new Set([principal.userId]));
      return { data: without(note, 'updated_at') };
    },
  });

  r.route({
    method: 'patch', path: '/sites/{siteId}/notes/{noteId}', summary: 'Replace a note\'s text',
    tag: 'notes', scope: 'notes:write', body: EditNote, response: EditedNote,
    async handler({ app, site, params, body }) {
      const repo = new NotesRepo(app.store);
      const row = await byPathId(params.noteId, 'note', (id) => repo.update(site.id, id, body.body));
      return { data: without(noteOut(row, site, await members(app, site.org_id)), 'created_at') };
    },
  });

  r.route({
    method: 'delete', path: '/sites/{siteId}/notes/{noteId}', summary: 'Delete a note', tag: 'notes', scope: 'notes:write',
    response: z.object({ id: z.string().uuid(), deleted: z.literal(true) }),
    async handler({ app, site, params }) {
      const repo = new NotesRepo(app.store);
      await byPathId(params.noteId, 'note', (id) => repo.remove(site.id, id));
      return { data: { id: params.noteId, deleted: true } };
    },
  });
}
