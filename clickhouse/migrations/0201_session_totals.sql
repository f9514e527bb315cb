-- Whole sessions ordered by their start, and first-seen visitors with a human/crawler split
-- (docs/REPORTS.md). Sessions started in a window are a primary-key range here, so sessions,
-- bounce and duration need no set of session ids; visitor_first (0200) is replaced by first_seen.

CREATE TABLE IF NOT EXISTS {db}.{local:session_totals} {on_cluster}
(
    site_id         UUID,
    session_start   DateTime64(3, 'UTC'),
    session_id      UInt64,
    visitor_id      SimpleAggregateFunction(any, UInt64),
    is_bot          SimpleAggregateFunction(max, UInt8),
    bot_kind        SimpleAggregateFunction(any, String),
    first_ts        SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_ts         SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
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
PARTITION BY toYYYYMM(session_start)
ORDER BY (site_id, session_start, session_id);
-- @distributed session_totals cityHash64(visitor_id)

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.session_totals_mv {on_cluster} TO {db}.{local:session_totals} AS
SELECT
    site_id, session_start, session_id,
    any(visitor_id) AS visitor_id, max(is_bot) AS is_bot, any(toString(bot_kind)) AS bot_kind,
    min(ts) AS first_ts, max(ts) AS last_ts,
    toUInt64(countIf(name = 'pageview')) AS pageviews, toUInt64(count()) AS events,
    any(entry_path) AS entry_path, any(referrer) AS referrer, any(toString(channel)) AS channel,
    any(utm_source) AS utm_source, any(utm_medium) AS utm_medium, any(utm_campaign) AS utm_campaign,
    any(utm_term) AS utm_term, any(gad_campaign_id) AS gad_campaign_id,
    any(toString(country)) AS country, any(toString(region)) AS region, any(toString(city)) AS city,
    any(toString(browser)) AS browser, any(toString(os)) AS os, any(toString(device)) AS device
FROM {db}.{local:events}
GROUP BY site_id, session_start, session_id;

-- First event ever per visitor, and first human event (NULL for a crawler-only visitor).
CREATE TABLE IF NOT EXISTS {db}.{local:first_seen} {on_cluster}
(
    site_id        UUID,
    visitor_id     UInt64,
    first_ts       SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    first_human_ts SimpleAggregateFunction(min, Nullable(DateTime64(3, 'UTC')))
)
ENGINE = AggregatingMergeTree
ORDER BY (site_id, visitor_id);
-- @distributed first_seen cityHash64(visitor_id)

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.first_seen_mv {on_cluster} TO {db}.{local:first_seen} AS
SELECT site_id, visitor_id, min(ts) AS first_ts, minOrNullIf(ts, is_bot = 0) AS first_human_ts
FROM {db}.{local:events}
GROUP BY site_id, visitor_id;

DROP VIEW IF EXISTS {db}.visitor_first_mv {on_cluster};
DROP TABLE IF EXISTS {db}.visitor_first {on_cluster};
DROP TABLE IF EXISTS {db}.{local:visitor_first} {on_cluster};
