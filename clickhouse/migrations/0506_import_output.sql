-- Import output: an import's passes write their sessionized rows here, and one INSERT ... SELECT
-- copies them into events at the end. An import cut between passes (a shutdown) has then stored
-- nothing in events and can simply be run again; written straight into events, a cut left the
-- passes already done stored, and running it again counted them twice. Rows are deleted when their
-- import finishes; the TTL is the safety net for an interrupted one.
CREATE TABLE IF NOT EXISTS {db}.{local:import_output} {on_cluster}
(
    import_id         UUID,
    created_at        DateTime DEFAULT now(),
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
    pathname          String,
    link              String,
    value_cents       Int64,
    props             Map(LowCardinality(String), String),
    entry_path        String,
    entry_hostname    LowCardinality(String),
    referrer          String,
    referrer_source   LowCardinality(String),
    channel           LowCardinality(String),
    utm_source        String,
    utm_medium        String,
    utm_campaign      String,
    utm_term          String,
    utm_content       String,
    gad_campaign_id   String,
    gclid             String,
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
ORDER BY (import_id, ts)
TTL created_at + INTERVAL 1 DAY;
-- @distributed import_output cityHash64(import_id)
