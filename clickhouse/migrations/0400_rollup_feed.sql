-- Rollups are fed off the acknowledgement path (clickhouse/feeder.ts), no longer by materialized
-- views on events. Measured on this machine: every part the engine writes costs about 10 ms of CPU in
-- file-system calls, and each view wrote one part per live insert (five parts per acknowledged
-- batch). The feeder aggregates whole block ranges of events into the same rollups about once a
-- second, and every report first catches the rollups up with the events written before it started.
DROP VIEW IF EXISTS {db}.session_slices_mv {on_cluster};
DROP VIEW IF EXISTS {db}.page_slices_mv {on_cluster};
DROP VIEW IF EXISTS {db}.session_totals_mv {on_cluster};
DROP VIEW IF EXISTS {db}.first_seen_mv {on_cluster};

-- Each committed insert gets the next block number; the feeder's watermark is one.
ALTER TABLE {db}.{local:events} {on_cluster} MODIFY SETTING enable_block_number_column = 1;

-- Live ingest writes a small part per acknowledged batch (15-40 a second under load), and with the
-- default merge selector background merges rewrote each row about six times: half a core at 8k
-- events/s, the largest engine cost. Merging at least ten parts at a time with a wider base cut the
-- merge CPU to about a third (docs/PERFORMANCE.md); queries see at most a few dozen parts more.
ALTER TABLE {db}.{local:events} {on_cluster} MODIFY SETTING min_parts_to_merge_at_once = 10, merge_selector_base = 10;

-- A feed retried after a crash repeats its insert_deduplication_token: the engine drops the repeat.
ALTER TABLE {db}.{local:session_slices} {on_cluster} MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.{local:page_slices} {on_cluster} MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.{local:session_totals} {on_cluster} MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.{local:first_seen} {on_cluster} MODIFY SETTING non_replicated_deduplication_window = 1000;

-- The feeder's watermark: blocks of events up to `fed` are in every rollup; `feeding` > `fed` while
-- the range (fed, feeding] is being fed (a restart finishes it with the same tokens).
CREATE TABLE IF NOT EXISTS {db}.rollup_feed {on_cluster}
(
    source  String,
    fed     UInt64,
    feeding UInt64,
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY source;

-- Everything stored before this migration was fed by the views it replaces.
INSERT INTO {db}.rollup_feed (source, fed, feeding, version)
SELECT 'events', ifNull(max(max_block_number), 0), ifNull(max(max_block_number), 0), 1
FROM system.parts WHERE database = '{db}' AND table = '{local:events}' AND active;
