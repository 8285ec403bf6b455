-- Webhooks: the endpoints merchants register, one delivery per (event,
-- endpoint) made from the events outbox, and the log of every attempt.

CREATE TABLE webhook_endpoints (
    id             TEXT PRIMARY KEY,
    merchant_id    TEXT NOT NULL,
    livemode       BOOLEAN NOT NULL,
    url            TEXT NOT NULL,
    enabled_events TEXT NOT NULL,                 -- JSON array: ["*"] or event types
    description    TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('enabled','disabled')),
    secret_sealed  TEXT NOT NULL,                 -- the signing secret, sealed (never in clear)
    -- Creation's Idempotency-Key, kept here rather than in idempotency_keys
    -- so that a replay can show the secret without storing it in clear.
    idem_principal TEXT,
    idem_key       TEXT,
    idem_hash      TEXT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    deleted_at     BIGINT
);
CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, livemode, id);
CREATE UNIQUE INDEX webhook_endpoints_idem ON webhook_endpoints (merchant_id, livemode, idem_principal, idem_key) WHERE idem_key IS NOT NULL;

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    merchant_id     TEXT NOT NULL,
    livemode        BOOLEAN NOT NULL,
    event_id        TEXT NOT NULL,
    endpoint_id     TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending','succeeded','failed')),
    attempt_count   INTEGER NOT NULL DEFAULT 0,
    -- While pending: when the next attempt is due; while an attempt is in
    -- flight, when its lease expires (so a crashed worker's delivery is due
    -- again then). NULL once succeeded or failed.
    next_attempt_at BIGINT,
    lease           TEXT,                         -- token of the worker holding the in-flight attempt
    fail_first      BOOLEAN NOT NULL DEFAULT FALSE, -- sandbox_webhook_fail
    redelivery      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id, id);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
-- The outbox dispatch makes at most one delivery per (event, endpoint);
-- redeliveries add more.
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (event_id, endpoint_id) WHERE redelivery = FALSE;

CREATE TABLE webhook_attempts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id   TEXT NOT NULL,
    livemode      BOOLEAN NOT NULL,
    attempt       INTEGER NOT NULL,
    at            BIGINT NOT NULL,
    http_status   INTEGER,
    latency_ms    BIGINT NOT NULL,
    error         TEXT,
    response_body TEXT,                           -- first 2 KiB of the answer, kept internally
    created_at    BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- A sealing key made by the database itself, used only for test-mode
-- endpoint secrets when PAYD_SECRETS_KEY is not configured.
CREATE TABLE webhook_keyring (
    id         TEXT PRIMARY KEY,
    key_hex    TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
