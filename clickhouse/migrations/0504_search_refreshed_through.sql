-- The console date of the last Search Console refresh that succeeded (empty: none since the import).
-- The next refresh goes back to the days before it, so days that arrived while refreshes failed or
-- stopped (a revoked key, Google down, workers stopped longer than the refresh's five days) are read.
ALTER TABLE {db}.integrations {on_cluster} ADD COLUMN IF NOT EXISTS refreshed_through String DEFAULT '' AFTER backfill_job;
