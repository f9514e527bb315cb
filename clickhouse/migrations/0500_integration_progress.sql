-- A payment backfill is resumable: the cursor is the provider's id of the last object stored, written
-- with the counts after every page, so a restarted job continues where the last one stopped. The job
-- id names one backfill generation (a re-sync starts a new one); the reconciler re-queues a queued or
-- running backfill whose job Redis lost. Webhook arrivals are shown on GET /integrations.
ALTER TABLE {db}.integrations {on_cluster} ADD COLUMN IF NOT EXISTS backfill_cursor String DEFAULT '' AFTER backfill_error;
ALTER TABLE {db}.integrations {on_cluster} ADD COLUMN IF NOT EXISTS backfill_job String DEFAULT '' AFTER backfill_cursor;
ALTER TABLE {db}.integrations {on_cluster} ADD COLUMN IF NOT EXISTS webhook_last_at Nullable(DateTime64(3, 'UTC')) AFTER backfill_job;
