-- Worker-fed tables keyed by the provider's natural key: a re-run or a duplicate webhook changes nothing.
CREATE TABLE IF NOT EXISTS {db}.{local:payments} {on_cluster}
(
    site_id UUID, provider LowCardinality(String), payment_id String, visitor_id UInt64, session_id UInt64,
    amount_cents Int64, refunded_cents Int64, currency LowCardinality(String), status LowCardinality(String),
    paid_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, provider, payment_id);
-- @distributed payments cityHash64(payment_id)

CREATE TABLE IF NOT EXISTS {db}.{local:lifecycle_events} {on_cluster}
(
    site_id UUID, provider LowCardinality(String), event_id String, kind LowCardinality(String),
    subscription_id String, occurred_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, provider, event_id);
-- @distributed lifecycle_events cityHash64(event_id)

-- Search console rows: ratios stored as summable parts (position x impressions).
CREATE TABLE IF NOT EXISTS {db}.{local:search_console} {on_cluster}
(
    site_id UUID, date Date, term String, hostname LowCardinality(String), path String,
    clicks UInt64, impressions UInt64, position_sum Float64, is_final UInt8, version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (site_id, date, term, hostname, path);
-- @distributed search_console cityHash64(term)
