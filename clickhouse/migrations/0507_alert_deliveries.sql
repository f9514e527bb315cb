-- How each alert firing's mail ended: sent, failed (its tries used up, or refused for good), skipped
-- (nobody to mail, the alert deleted) or off (recorded while TALLY_SMTP_URL was unset). A firing with
-- no row here has a mail still owed: the alerts run re-queues it, so a mail queued in a Redis that
-- restarted empty (or a process that died mid-retry) is still sent. Purged with the firings.
CREATE TABLE IF NOT EXISTS {db}.alert_deliveries {on_cluster}
(
    firing_id UUID, site_id UUID, outcome LowCardinality(String), at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(at) ORDER BY (site_id, firing_id);
