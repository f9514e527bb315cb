CREATE DATABASE IF NOT EXISTS tally;

CREATE TABLE IF NOT EXISTS tally.schema_migrations
(
    version UInt32, name String, applied_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY version;

-- Events: one wide table. Session attributes (the first event's) are copied onto every event at
-- ingest so session filters never need a join.
CREATE TABLE IF NOT EXISTS tally.events
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

-- Metadata: small ReplacingMergeTree(version, is_deleted) tables read with FINAL. A write is an
-- insert of the whole row with a newer version; a delete is the row with is_deleted = 1.

CREATE TABLE IF NOT EXISTS tally.orgs
(
    id UUID, name String, retention_days UInt32, created_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

CREATE TABLE IF NOT EXISTS tally.users
(
    id UUID, email String, created_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

-- A member's role and site access in one organisation. all_sites = 1 means every site, now and later.
CREATE TABLE IF NOT EXISTS tally.memberships
(
    org_id UUID, user_id UUID, role LowCardinality(String), all_sites UInt8, site_ids Array(UUID),
    created_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (org_id, user_id);

CREATE TABLE IF NOT EXISTS tally.sites
(
    id UUID, org_id UUID, domain String, name String, timezone String, currency LowCardinality(String),
    active UInt8, excluded_paths Array(String), allowed_hostnames Array(String),
    excluded_hostnames Array(String), excluded_countries Array(String),
    session_strategy LowCardinality(String),
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

-- Only the SHA-256 of a key is stored. all_sites = 1 means the key names no sites.
CREATE TABLE IF NOT EXISTS tally.api_keys
(
    id UUID, org_id UUID, user_id UUID, name String, token_hash String, token_hint String,
    scopes Array(LowCardinality(String)), all_sites UInt8, site_ids Array(UUID),
    expires_at Nullable(DateTime64(3, 'UTC')), revoked_at Nullable(DateTime64(3, 'UTC')),
    created_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8,
    INDEX token_hash_idx token_hash TYPE bloom_filter GRANULARITY 1
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id;

-- Kept apart from api_keys so a late last-used write can never resurrect a revoked key row.
CREATE TABLE IF NOT EXISTS tally.api_key_usage
(
    key_id UUID, last_used_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree ORDER BY key_id;

CREATE TABLE IF NOT EXISTS tally.goals
(
    id UUID, site_id UUID, name String, kind LowCardinality(String), event_name String, path_pattern String,
    revenue_signal UInt8, created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

CREATE TABLE IF NOT EXISTS tally.funnels
(
    id UUID, site_id UUID, name String, steps String, window_seconds UInt32,
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

-- occurred_date pins a `date` note to its calendar day whatever the site's timezone later becomes.
CREATE TABLE IF NOT EXISTS tally.notes
(
    id UUID, site_id UUID, body String, granularity LowCardinality(String),
    occurred_at DateTime64(3, 'UTC'), occurred_date Nullable(Date32), author_id Nullable(UUID),
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

CREATE TABLE IF NOT EXISTS tally.alerts
(
    id UUID, site_id UUID, name String, enabled UInt8, trigger_type LowCardinality(String),
    goal_name Nullable(String), threshold_mode LowCardinality(String), threshold Float64,
    window_minutes UInt32, subject String, body Nullable(String), created_by UUID,
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, id);

-- Evaluation state written by the worker, apart from the alert row the API edits.
CREATE TABLE IF NOT EXISTS tally.alert_state
(
    alert_id UUID, firing UInt8, last_value Float64, last_evaluated_at DateTime64(3, 'UTC'),
    last_fired_at Nullable(DateTime64(3, 'UTC')), version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY alert_id;

CREATE TABLE IF NOT EXISTS tally.alert_firings
(
    id UUID, alert_id UUID, site_id UUID, fired_at DateTime64(3, 'UTC'), value Float64, threshold Float64
) ENGINE = ReplacingMergeTree ORDER BY (site_id, alert_id, fired_at, id);

CREATE TABLE IF NOT EXISTS tally.share_boards
(
    site_id UUID, slug String, label String, active UInt8, panels String, max_range_days UInt32,
    expires_at Nullable(DateTime64(3, 'UTC')), created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'),
    version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY site_id;

CREATE TABLE IF NOT EXISTS tally.widgets
(
    site_id UUID, slug String, type LowCardinality(String), metric LowCardinality(String), enabled UInt8,
    chart_style LowCardinality(String), publish_revenue UInt8,
    created_at DateTime64(3, 'UTC'), updated_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY site_id;

-- View counters for public boards and widgets: summed, never rewritten.
CREATE TABLE IF NOT EXISTS tally.public_views
(
    kind LowCardinality(String), slug String, views UInt64
) ENGINE = SummingMergeTree ORDER BY (kind, slug);

CREATE TABLE IF NOT EXISTS tally.integrations
(
    site_id UUID, provider LowCardinality(String), credentials String, webhook_secret String,
    connected_at DateTime64(3, 'UTC'), backfill_state LowCardinality(String), backfill_counts String,
    backfill_started_at Nullable(DateTime64(3, 'UTC')), backfill_finished_at Nullable(DateTime64(3, 'UTC')),
    backfill_error Nullable(String), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY site_id;

-- Worker-fed tables keyed by the provider's natural key: a re-run or a duplicate webhook changes nothing.
CREATE TABLE IF NOT EXISTS tally.payments
(
    site_id UUID, provider LowCardinality(String), payment_id String, visitor_id UInt64, session_id UInt64,
    amount_cents Int64, refunded_cents Int64, currency LowCardinality(String), status LowCardinality(String),
    paid_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, provider, payment_id);

CREATE TABLE IF NOT EXISTS tally.lifecycle_events
(
    site_id UUID, provider LowCardinality(String), event_id String, kind LowCardinality(String),
    subscription_id String, occurred_at DateTime64(3, 'UTC'), version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (site_id, provider, event_id);

-- Search console rows: ratios stored as summable parts (position x impressions).
CREATE TABLE IF NOT EXISTS tally.search_console
(
    site_id UUID, date Date, term String, hostname LowCardinality(String), path String,
    clicks UInt64, impressions UInt64, position_sum Float64, is_final UInt8, version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (site_id, date, term, hostname, path);

-- Import staging: `tally events import` streams enriched lines here, then one INSERT ... SELECT cuts
-- sessions with window functions and copies each session's first-event attributes into events.
-- Rows are deleted when their import finishes; the TTL is the safety net for an interrupted import.
-- session_key is the hashed explicit `session` string, 0 when the line had none.
CREATE TABLE IF NOT EXISTS tally.import_staging
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

-- Report rollups (query compiler, docs/REPORTS.md). Both are fed by materialized views on events,
-- so imports and live ingest fill them alike, and both stay exact: they keep visitor and session ids,
-- so distinct counts over any set of rows are still exact.

-- One row per session per UTC quarter-hour in which it had events (per insert batch until merged).
-- Every zone's midnight and hour lie on quarter-hour boundaries, so windows and buckets in any tz
-- read whole slices. Session attributes are the session's, counters are summed.
CREATE TABLE IF NOT EXISTS tally.session_slices
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

CREATE MATERIALIZED VIEW IF NOT EXISTS tally.session_slices_mv TO tally.session_slices AS
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
FROM tally.events
GROUP BY site_id, slice, session_id, is_bot, bot_kind;

-- First event ever per visitor: new visitors are those whose first event lies in the window.
CREATE TABLE IF NOT EXISTS tally.visitor_first
(
    site_id    UUID,
    visitor_id UInt64,
    first_ts   SimpleAggregateFunction(min, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (site_id, visitor_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS tally.visitor_first_mv TO tally.visitor_first AS
SELECT site_id, visitor_id, min(ts) AS first_ts
FROM tally.events
GROUP BY site_id, visitor_id;

-- Whole sessions ordered by their start, and first-seen visitors with a human/crawler split
-- (docs/REPORTS.md). Sessions started in a window are a primary-key range here, so sessions,
-- bounce and duration need no set of session ids; visitor_first (0200) is replaced by first_seen.

CREATE TABLE IF NOT EXISTS tally.session_totals
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

CREATE MATERIALIZED VIEW IF NOT EXISTS tally.session_totals_mv TO tally.session_totals AS
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
FROM tally.events
GROUP BY site_id, session_start, session_id;

-- First event ever per visitor, and first human event (NULL for a crawler-only visitor).
CREATE TABLE IF NOT EXISTS tally.first_seen
(
    site_id        UUID,
    visitor_id     UInt64,
    first_ts       SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    first_human_ts SimpleAggregateFunction(min, Nullable(DateTime64(3, 'UTC')))
)
ENGINE = AggregatingMergeTree
ORDER BY (site_id, visitor_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS tally.first_seen_mv TO tally.first_seen AS
SELECT site_id, visitor_id, min(ts) AS first_ts, minOrNullIf(ts, is_bot = 0) AS first_human_ts
FROM tally.events
GROUP BY site_id, visitor_id;

DROP VIEW IF EXISTS tally.visitor_first_mv;

DROP TABLE IF EXISTS tally.visitor_first;

DROP TABLE IF EXISTS tally.visitor_first;

-- Pageviews per session, page and UTC quarter-hour (docs/REPORTS.md): the path and hostname
-- breakdowns group by dictionary-encoded pages instead of hashing every raw pathname string. Visitor
-- and session ids are kept, so distinct counts stay exact; session attributes ride along so session
-- filters still apply.
CREATE TABLE IF NOT EXISTS tally.page_slices
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

CREATE MATERIALIZED VIEW IF NOT EXISTS tally.page_slices_mv TO tally.page_slices AS
SELECT
    site_id, toDateTime(toStartOfFifteenMinutes(ts), 'UTC') AS slice, hostname, pathname, session_id, is_bot, bot_kind,
    any(visitor_id) AS visitor_id, any(session_start) AS session_start, toUInt64(count()) AS views,
    any(entry_path) AS entry_path, any(referrer) AS referrer, any(channel) AS channel,
    any(utm_source) AS utm_source, any(utm_medium) AS utm_medium, any(utm_campaign) AS utm_campaign,
    any(utm_term) AS utm_term, any(gad_campaign_id) AS gad_campaign_id, any(country) AS country, any(region) AS region,
    any(city) AS city, any(browser) AS browser, any(os) AS os, any(device) AS device
FROM tally.events
WHERE name = 'pageview'
GROUP BY site_id, slice, hostname, pathname, session_id, is_bot, bot_kind;

-- The share board's expiry clock restarts on every save, also when a save does not repeat
-- `expires_in_days`, so the chosen number of days is kept beside the computed expires_at.
ALTER TABLE tally.share_boards ADD COLUMN IF NOT EXISTS expires_in_days Nullable(UInt32) AFTER expires_at;

-- Rollups are fed off the acknowledgement path (clickhouse/feeder.ts), no longer by materialized
-- views on events. Measured on this machine: every part the engine writes costs about 10 ms of CPU in
-- file-system calls, and each view wrote one part per live insert (five parts per acknowledged
-- batch). The feeder aggregates whole block ranges of events into the same rollups about once a
-- second, and every report first catches the rollups up with the events written before it started.
DROP VIEW IF EXISTS tally.session_slices_mv;

DROP VIEW IF EXISTS tally.page_slices_mv;

DROP VIEW IF EXISTS tally.session_totals_mv;

DROP VIEW IF EXISTS tally.first_seen_mv;

-- Each committed insert gets the next block number; the feeder's watermark is one.
ALTER TABLE tally.events MODIFY SETTING enable_block_number_column = 1;

-- Live ingest writes a small part per acknowledged batch (15-40 a second under load), and with the
-- default merge selector background merges rewrote each row about six times: half a core at 8k
-- events/s, the largest engine cost. Merging at least ten parts at a time with a wider base cut the
-- merge CPU to about a third (docs/PERFORMANCE.md); queries see at most a few dozen parts more.
ALTER TABLE tally.events MODIFY SETTING min_parts_to_merge_at_once = 10, merge_selector_base = 10;

-- A feed retried after a crash repeats its insert_deduplication_token: the engine drops the repeat.
ALTER TABLE tally.session_slices MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE tally.page_slices MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE tally.session_totals MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE tally.first_seen MODIFY SETTING non_replicated_deduplication_window = 1000;

-- The feeder's watermark: blocks of events up to `fed` are in every rollup; `feeding` > `fed` while
-- the range (fed, feeding] is being fed (a restart finishes it with the same tokens).
CREATE TABLE IF NOT EXISTS tally.rollup_feed
(
    source  String,
    fed     UInt64,
    feeding UInt64,
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY source;

-- Everything stored before this migration was fed by the views it replaces.
INSERT INTO tally.rollup_feed (source, fed, feeding, version)
SELECT 'events', ifNull(max(max_block_number), 0), ifNull(max(max_block_number), 0), 1
FROM system.parts WHERE database = 'tally' AND table = 'events' AND active;

-- A payment backfill is resumable: the cursor is the provider's id of the last object stored, written
-- with the counts after every page, so a restarted job continues where the last one stopped. The job
-- id names one backfill generation (a re-sync starts a new one); the reconciler re-queues a queued or
-- running backfill whose job Redis lost. Webhook arrivals are shown on GET /integrations.
ALTER TABLE tally.integrations ADD COLUMN IF NOT EXISTS backfill_cursor String DEFAULT '' AFTER backfill_error;

ALTER TABLE tally.integrations ADD COLUMN IF NOT EXISTS backfill_job String DEFAULT '' AFTER backfill_cursor;

ALTER TABLE tally.integrations ADD COLUMN IF NOT EXISTS webhook_last_at Nullable(DateTime64(3, 'UTC')) AFTER backfill_job;

-- A Search Console day is replaced whole when it is imported again: rows the new import no longer
-- has are tombstoned (is_deleted = 1 at a newer version), as a re-sync tombstones every row of the
-- site. Readers read FINAL and skip tombstones.
ALTER TABLE tally.search_console ADD COLUMN IF NOT EXISTS is_deleted UInt8 DEFAULT 0 AFTER version;

-- Which account a connection reads, shown on GET /integrations: the Search Console property, or the
-- Stripe key's mode, kind and last four characters ("live secret key ...4242"). Never a secret.
ALTER TABLE tally.integrations ADD COLUMN IF NOT EXISTS account String DEFAULT '' AFTER provider;

-- Revenue is net of refunds and of lost disputes (chargebacks): the amount of a charge's disputes
-- that closed lost, read from Stripe with the charge. A dispute still open or won takes nothing.
ALTER TABLE tally.payments ADD COLUMN IF NOT EXISTS disputed_cents Int64 DEFAULT 0 AFTER refunded_cents;

-- The console date of the last Search Console refresh that succeeded (empty: none since the import).
-- The next refresh goes back to the days before it, so days that arrived while refreshes failed or
-- stopped (a revoked key, Google down, workers stopped longer than the refresh's five days) are read.
ALTER TABLE tally.integrations ADD COLUMN IF NOT EXISTS refreshed_through String DEFAULT '' AFTER backfill_job;

-- The first date Search Console said it still collects (metadata.firstIncompleteDate), as of the
-- last import or refresh that read it: a window reaching it is `partial` even where those days have
-- no rows yet (a quiet property's recent days will still grow).
ALTER TABLE tally.integrations ADD COLUMN IF NOT EXISTS incomplete_from String DEFAULT '' AFTER refreshed_through;

-- Import output: an import's passes write their sessionized rows here, and one INSERT ... SELECT
-- copies them into events at the end. An import cut between passes (a shutdown) has then stored
-- nothing in events and can simply be run again; written straight into events, a cut left the
-- passes already done stored, and running it again counted them twice. Rows are deleted when their
-- import finishes; the TTL is the safety net for an interrupted one.
CREATE TABLE IF NOT EXISTS tally.import_output
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

-- How each alert firing's mail ended: sent, failed (its tries used up, or refused for good), skipped
-- (nobody to mail, the alert deleted) or off (recorded while TALLY_SMTP_URL was unset). A firing with
-- no row here has a mail still owed: the alerts run re-queues it, so a mail queued in a Redis that
-- restarted empty (or a process that died mid-retry) is still sent. Purged with the firings.
CREATE TABLE IF NOT EXISTS tally.alert_deliveries
(
    firing_id UUID, site_id UUID, outcome LowCardinality(String), at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(at) ORDER BY (site_id, firing_id);
