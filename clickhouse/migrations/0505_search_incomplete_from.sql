-- The first date Search Console said it still collects (metadata.firstIncompleteDate), as of the
-- last import or refresh that read it: a window reaching it is `partial` even where those days have
-- no rows yet (a quiet property's recent days will still grow).
ALTER TABLE {db}.integrations {on_cluster} ADD COLUMN IF NOT EXISTS incomplete_from String DEFAULT '' AFTER refreshed_through;
