-- Events: one wide table. Session attributes (the first event's) are copied onto every event at
-- ingest so session filters never need a join.
CREATE TABLE IF NOT EXISTS {db}.{local:events} {on_cluster}
(
    site_id           UUID,
    ts                DateTime64(3, 'UTC'),
    name              LowCardinality(String),
    event_id          UUID,
    visitor_id        UInt64,
    session_id        UInt64,
    session_start     DateTime64(3, 'UTC'),
    is_bot            UInt8,
    bot_kind          LowCardinality(String),
    crawler_name      LowCardinality(String),
    crawler_operator  LowCardinality(String),
    hostname          LowCardinality(String),
    pathname          String CODEC(ZSTD(3)),
    link              String CODEC(ZSTD(3)),
    value_cents       Int64,
    props             Map(LowCardinality(String), String) CODEC(ZSTD(3)),
    entry_path        String CODEC(ZSTD(3)),
    entry_hostname    LowCardinality(String),
    referrer          String CODEC(ZSTD(3)),
    referrer_source   LowCardinality(String),
    channel           LowCardinality(String),
    utm_source        String CODEC(ZSTD(3)),
    utm_medium        String CODEC(ZSTD(3)),
    utm_campaign      String CODEC(ZSTD(3)),
    utm_term          String CODEC(ZSTD(3)),
    utm_content       String CODEC(ZSTD(3)),
    gad_campaign_id   String CODEC(ZSTD(3)),
    gclid             String CODEC(ZSTD(3)),
    country           LowCardinality(String),
    region            LowCardinality(String),
    city              LowCardinality(String),
    browser           LowCardinality(String),
    browser_version   LowCardinality(String),
    os                LowCardinality(String),
    os_version        LowCardinality(String),
    device            LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_id, toDate(ts), name, visitor_id, ts)
SAMPLE BY visitor_id;
-- @distributed events cityHash64(visitor_id)

-- Sessions are derived inside ClickHouse from events by materialized views: whole sessions in
-- session_totals (0201), per quarter hour in session_slices (0200). Each view on events is paid on
-- every insert, so there is exactly one per shape the reports read.
