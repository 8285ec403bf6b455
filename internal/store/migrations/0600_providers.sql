-- Live providers (internal/callbacks, internal/reconciliation).

-- provider_callbacks: every provider callback payd accepted, by event id, so
-- a redelivery is answered "duplicate" without touching its object. Rows older
-- than 30 days are pruned (providers stop redelivering long before).
CREATE TABLE provider_callbacks (
    merchant_id TEXT NOT NULL,
    provider    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    livemode    BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, provider, event_id)
);
CREATE INDEX provider_callbacks_created ON provider_callbacks (created_at);

-- provider_checks: when reconciliation may next ask a provider about an
-- intent still waiting for its customer (backoff); one row per intent asked.
CREATE TABLE provider_checks (
    object_id     TEXT PRIMARY KEY,
    merchant_id   TEXT NOT NULL,
    livemode      BOOLEAN NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_check_at BIGINT NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX provider_checks_next ON provider_checks (next_check_at);
