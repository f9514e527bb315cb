-- Report rollups (query compiler, docs/REPORTS.md). Both are fed by materialized views on events,
-- so imports and live ingest fill them alike, and both stay exact: they keep visitor and session ids,
-- so distinct counts over any set of rows are still exact.

-- One row per session per UTC quarter-hour in which it had events (per insert batch until merged).
-- Every zone's midnight and hour lie on quarter-hour boundaries, so windows and buckets in any tz
-- read whole slices. Session attributes are the session's, counters are summed.
CREATE TABLE IF NOT EXISTS {db}.{local:session_slices} {on_cluster}
(
    site_id         UUID,
    slice           DateTime('UTC'),
    session_id      UInt64,
    is_bot          UInt8,
    bot_kind        LowCardinality(String),
    visitor_id      SimpleAggregateFunction(any, UInt64),
    session_start   SimpleAggregateFunction(any, DateTime64(3, 'UTC')),
    pageviews       SimpleAggregateFunction(sum, UInt64),
    events          SimpleAggregateFunction(sum, UInt64),
    entry_path      SimpleAggregateFunction(any, String),
    referrer        SimpleAggregateFunction(any, String),
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
PARTITION BY toYYYYMM(slice)
ORDER BY (site_id, slice, session_id, is_bot, bot_kind);
-- @distributed session_slices cityHash64(visitor_id)

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.session_slices_mv {on_cluster} TO {db}.{local:session_slices} AS
SELECT
    site_id, toDateTime(toStartOfFifteenMinutes(ts), 'UTC') AS slice, session_id, is_bot, bot_kind,
    any(visitor_id) AS visitor_id,
    any(session_start) AS session_start,
    toUInt64(countIf(name = 'pageview')) AS pageviews,
    toUInt64(count()) AS events,
    any(entry_path) AS entry_path, any(referrer) AS referrer, any(toString(channel)) AS channel,
    any(utm_source) AS utm_source, any(utm_medium) AS utm_medium, any(utm_campaign) AS utm_campaign,
    any(utm_term) AS utm_term, any(gad_campaign_id) AS gad_campaign_id,
    any(toString(country)) AS country, any(toString(region)) AS region, any(toString(city)) AS city,
    any(toString(browser)) AS browser, any(toString(os)) AS os, any(toString(device)) AS device
FROM {db}.{local:events}
GROUP BY site_id, slice, session_id, is_bot, bot_kind;

-- First event ever per visitor: new visitors are those whose first event lies in the window.
CREATE TABLE IF NOT EXISTS {db}.{local:visitor_first} {on_cluster}
(
    site_id    UUID,
    visitor_id UInt64,
    first_ts   SimpleAggregateFunction(min, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (site_id, visitor_id);
-- @distributed visitor_first cityHash64(visitor_id)

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.visitor_first_mv {on_cluster} TO {db}.{local:visitor_first} AS
SELECT site_id, visitor_id, min(ts) AS first_ts
FROM {db}.{local:events}
GROUP BY site_id, visitor_id;

-- Events stored before this migration (single node; on a cluster each shard backfills its own).
INSERT INTO {db}.{local:session_slices}
SELECT
    site_id, toDateTime(toStartOfFifteenMinutes(ts), 'UTC') AS slice, session_id, is_bot, bot_kind,
    any(visitor_id), any(session_start), toUInt64(countIf(name = 'pageview')), toUInt64(count()),
    any(entry_path), any(referrer), any(toString(channel)), any(utm_source), any(utm_medium), any(utm_campaign),
    any(utm_term), any(gad_campaign_id), any(toString(country)), any(toString(region)), any(toString(city)),
    any(toString(browser)), any(toString(os)), any(toString(device))
FROM {db}.{local:events}
GROUP BY site_id, slice, session_id, is_bot, bot_kind;

INSERT INTO {db}.{local:visitor_first}
SELECT site_id, visitor_id, min(ts) FROM {db}.{local:events} GROUP BY site_id, visitor_id;
