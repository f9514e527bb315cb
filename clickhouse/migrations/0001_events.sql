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

-- Sessions: derived inside ClickHouse from events. Every event of a session carries the same
-- session_start, so it can sit in the sort key; the aggregate columns merge across inserts.
CREATE TABLE IF NOT EXISTS {db}.{local:sessions} {on_cluster}
(
    site_id         UUID,
    session_start   DateTime64(3, 'UTC'),
    session_id      UInt64,
    visitor_id      SimpleAggregateFunction(any, UInt64),
    is_bot          SimpleAggregateFunction(max, UInt8),
    first_ts        SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_ts         SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    pageviews       SimpleAggregateFunction(sum, UInt64),
    events          SimpleAggregateFunction(sum, UInt64),
    entry_path      SimpleAggregateFunction(any, String),
    entry_hostname  SimpleAggregateFunction(any, String),
    referrer_source SimpleAggregateFunction(any, String),
    channel         SimpleAggregateFunction(any, String),
    utm_source      SimpleAggregateFunction(any, String),
    utm_medium      SimpleAggregateFunction(any, String),
    utm_campaign    SimpleAggregateFunction(any, String),
    utm_term        SimpleAggregateFunction(any, String),
    gad_campaign_id SimpleAggregateFunction(any, String),
    country         SimpleAggregateFunction(any, String),
    region          SimpleAggregateFunction(any, String),
    city            SimpleAggregateFunction(any, String),
    browser         SimpleAggregateFunction(any, String),
    os              SimpleAggregateFunction(any, String),
    device          SimpleAggregateFunction(any, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(session_start)
ORDER BY (site_id, toDate(session_start), session_id);
-- @distributed sessions session_id

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.sessions_mv {on_cluster} TO {db}.{local:sessions} AS
SELECT
    site_id, session_start, session_id,
    any(visitor_id) AS visitor_id,
    max(is_bot) AS is_bot,
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    toUInt64(countIf(name = 'pageview')) AS pageviews,
    toUInt64(count()) AS events,
    any(entry_path) AS entry_path, any(toString(entry_hostname)) AS entry_hostname,
    any(toString(referrer_source)) AS referrer_source, any(toString(channel)) AS channel,
    any(utm_source) AS utm_source, any(utm_medium) AS utm_medium, any(utm_campaign) AS utm_campaign,
    any(utm_term) AS utm_term, any(gad_campaign_id) AS gad_campaign_id,
    any(toString(country)) AS country, any(toString(region)) AS region, any(toString(city)) AS city,
    any(toString(browser)) AS browser, any(toString(os)) AS os, any(toString(device)) AS device
FROM {db}.{local:events}
GROUP BY site_id, session_start, session_id;
