-- Import staging: `tally events import` streams enriched lines here, then one INSERT ... SELECT cuts
-- sessions with window functions and copies each session's first-event attributes into events.
-- Rows are deleted when their import finishes; the TTL is the safety net for an interrupted import.
-- session_key is the hashed explicit `session` string, 0 when the line had none.
CREATE TABLE IF NOT EXISTS {db}.{local:import_staging} {on_cluster}
(
    import_id         UUID,
    line              UInt32,
    session_key       UInt64,
    created_at        DateTime DEFAULT now(),
    site_id           UUID,
    ts                DateTime64(3, 'UTC'),
    name              LowCardinality(String),
    event_id          UUID,
    visitor_id        UInt64,
    is_bot            UInt8,
    bot_kind          LowCardinality(String),
    crawler_name      LowCardinality(String),
    crawler_operator  LowCardinality(String),
    hostname          LowCardinality(String),
    pathname          String,
    link              String,
    value_cents       Int64,
    props             Map(LowCardinality(String), String),
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
ORDER BY (import_id, visitor_id, session_key, ts, line)
TTL created_at + INTERVAL 1 DAY;
-- @distributed import_staging cityHash64(import_id)
