-- A Search Console day is replaced whole when it is imported again: rows the new import no longer
-- has are tombstoned (is_deleted = 1 at a newer version), as a re-sync tombstones every row of the
-- site. Readers read FINAL and skip tombstones.
ALTER TABLE {db}.{local:search_console} {on_cluster} ADD COLUMN IF NOT EXISTS is_deleted UInt8 DEFAULT 0 AFTER version;
