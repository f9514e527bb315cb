-- The share board's expiry clock restarts on every save, also when a save does not repeat
-- `expires_in_days`, so the chosen number of days is kept beside the computed expires_at.
ALTER TABLE {db}.share_boards {on_cluster} ADD COLUMN IF NOT EXISTS expires_in_days Nullable(UInt32) AFTER expires_at;
