-- Pageviews per session, page and UTC quarter-hour (docs/REPORTS.md): the path and hostname
-- breakdowns group by dictionary-encoded pages instead of hashing every raw pathname string. Visitor
-- and session ids are kept, so distinct counts stay exact; session attributes ride along so session
-- filters still apply.
CREATE TABLE IF NOT EXISTS {db}.{local:page_slices} {on_cluster}
(
    site_id         UUID,
    slice           DateTime('UTC'),
    hostname        LowCardinality(String),
    pathname        LowCardinality(String),
    session_id      UInt64,
    is_bot          UInt8,
    bot_kind        LowCardinality(String),
    visitor_id      SimpleAggregateFunction(any, UInt64),
    session_start   SimpleAggregateFunction(any, DateTime64(3, 'UTC')),
    views           SimpleAggregateFunction(sum, UInt64),
    entry_path      SimpleAggregateFunction(any, LowCardinality(String)),
    referrer        SimpleAggregateFunction(any, LowCardinality(String)),
    channel         SimpleAggregateFunction(any, LowCardinality(String)),
    utm_source      SimpleAggregateFunction(any, LowCardinality(String)),
    utm_medium      SimpleAggregateFunction(any, LowCardinality(String)),
    utm_campaign    SimpleAggregateFunction(any, LowCardinality(String)),
    utm_term        SimpleAggregateFunction(any, LowCardinality(String)),
    gad_campaign_id SimpleAggregateFunction(any, LowCardinality(String)),
    country         SimpleAggregateFunction(any, LowCardinality(String)),
    region          SimpleAggregateFunction(any, LowCardinality(String)),
    city            SimpleAggregateFunction(any, LowCardinality(String)),
    browser         SimpleAggregateFunction(any, LowCardinality(String)),
    os              SimpleAggregateFunction(any, LowCardinality(String)),
    device          SimpleAggregateFunction(any, LowCardinality(String))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(slice)
ORDER BY (site_id, slice, hostname, pathname, session_id, is_bot, bot_kind);
-- @distributed page_slices cityHash64(visitor_id)

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.page_slices_mv {on_cluster} TO {db}.{local:page_slices} AS
SELECT
    site_id, toDateTime(toStartOfFifteenMinutes(ts), 'UTC') AS slice, hostname, pathname, session_id, is_bot, bot_kind,
    any(visitor_id) AS visitor_id, any(session_start) AS session_start, toUInt64(count()) AS views,
    any(entry_path) AS entry_path, any(referrer) AS referrer, any(channel) AS channel,
    any(utm_source) AS utm_source, any(utm_medium) AS utm_medium, any(utm_campaign) AS utm_campaign,
    any(utm_term) AS utm_term, any(gad_campaign_id) AS gad_campaign_id, any(country) AS country, any(region) AS region,
    any(city) AS city, any(browser) AS browser, any(os) AS os, any(device) AS device
FROM {db}.{local:events}
WHERE name = 'pageview'
GROUP BY site_id, slice, hostname, pathname, session_id, is_bot, bot_kind;
