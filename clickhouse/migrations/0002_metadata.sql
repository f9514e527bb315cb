-- Metadata: small ReplacingMergeTree(version, is_deleted) tables read with FINAL. A write is an
-- insert of the whole row with a newer version; a delete is the row with is_deleted = 1.

CREATE TABLE IF NOT EXISTS {db}.orgs {on_cluster}
(
    id UUID, name String, retention_days UInt32, created_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

CREATE TABLE IF NOT EXISTS {db}.users {on_cluster}
(
    id UUID, email String, created_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

-- A member's role and site access in one organisation. all_sites = 1 means every site, now and later.
CREATE TABLE IF NOT EXISTS {db}.memberships {on_cluster}
(
    org_id UUID, user_id UUID, role LowCardinality(String), all_sites UInt8, site_ids Array(UUID),
    created_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (org_id, user_id);

CREATE TABLE IF NOT EXISTS {db}.sites {on_cluster}
(
    id UUID, org_id UUID, domain String, name String, timezone String, currency LowCardinality(String),
    active UInt8, excluded_paths Array(String), allowed_hostnames Array(String),
    excluded_hostnames Array(String), excluded_countries Array(String),
    session_strategy LowCardinality(String),
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

-- Only the SHA-256 of a key is stored. all_sites = 1 means the key names no sites.
CREATE TABLE IF NOT EXISTS {db}.api_keys {on_cluster}
(
    id UUID, org_id UUID, user_id UUID, name String, token_hash String, token_hint String,
    scopes Array(LowCardinality(String)), all_sites UInt8, site_ids Array(UUID),
    expires_at Nullable(DateTime64(3, 'UTC')), revoked_at Nullable(DateTime64(3, 'UTC')),
    created_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8,
    INDEX token_hash_idx token_hash TYPE bloom_filter GRANULARITY 1
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

-- Kept apart from api_keys so a late last-used write can never resurrect a revoked key row.
CREATE TABLE IF NOT EXISTS {db}.api_key_usage {on_cluster}
(
    key_id UUID, last_used_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree ORDER BY key_id;

CREATE TABLE IF NOT EXISTS {db}.goals {on_cluster}
(
    id UUID, site_id UUID, name String, kind LowCardinality(String), event_name String, path_pattern String,
    revenue_signal UInt8, created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

CREATE TABLE IF NOT EXISTS {db}.funnels {on_cluster}
(
    id UUID, site_id UUID, name String, steps String, window_seconds UInt32,
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

-- occurred_date pins a `date` note to its calendar day whatever the site's timezone later becomes.
CREATE TABLE IF NOT EXISTS {db}.notes {on_cluster}
(
    id UUID, site_id UUID, body String, granularity LowCardinality(String),
    occurred_at DateTime64(3, 'UTC'), occurred_date Nullable(Date32), author_id Nullable(UUID),
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

CREATE TABLE IF NOT EXISTS {db}.alerts {on_cluster}
(
    id UUID, site_id UUID, name String, enabled UInt8, trigger_type LowCardinality(String),
    goal_name Nullable(String), threshold_mode LowCardinality(String), threshold Float64,
    window_minutes UInt32, subject String, body Nullable(String), created_by UUID,
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

-- Evaluation state written by the worker, apart from the alert row the API edits.
CREATE TABLE IF NOT EXISTS {db}.alert_state {on_cluster}
(
    alert_id UUID, firing UInt8, last_value Float64, last_evaluated_at DateTime64(3, 'UTC'),
    last_fired_at Nullable(DateTime64(3, 'UTC')), version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY alert_id;

CREATE TABLE IF NOT EXISTS {db}.alert_firings {on_cluster}
(
    id UUID, alert_id UUID, site_id UUID, fired_at DateTime64(3, 'UTC'), value Float64, threshold Float64
) ENGINE = ReplacingMergeTree ORDER BY (site_id, alert_id, fired_at, id);

CREATE TABLE IF NOT EXISTS {db}.share_boards {on_cluster}
(
    site_id UUID, slug String, label String, active UInt8, panels String, max_range_days UInt32,
    expires_at Nullable(DateTime64(3, 'UTC')), created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY site_id;

CREATE TABLE IF NOT EXISTS {db}.widgets {on_cluster}
(
    site_id UUID, slug String, type LowCardinality(String), metric LowCardinality(String), enabled UInt8,
    chart_style LowCardinality(String), publish_revenue UInt8,
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY site_id;

-- View counters for public boards and widgets: summed, never rewritten.
CREATE TABLE IF NOT EXISTS {db}.public_views {on_cluster}
(
    kind LowCardinality(String), slug String, views UInt64
) ENGINE = SummingMergeTree ORDER BY (kind, slug);

CREATE TABLE IF NOT EXISTS {db}.integrations {on_cluster}
(
    site_id UUID, provider LowCardinality(String), credentials String, webhook_secret String,
    connected_at DateTime64(3, 'UTC'), backfill_state LowCardinality(String), backfill_counts String,
    backfill_started_at Nullable(DateTime64(3, 'UTC')), backfill_finished_at Nullable(DateTime64(3, 'UTC')),
    backfill_error Nullable(String), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY site_id;
