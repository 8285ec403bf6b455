-- Webhook operations: rotating an endpoint's signing secret with a grace
-- period, recovering failed deliveries since a time, and a per-endpoint
-- delivery rate.

-- The secret that signed before the last rotation (sealed like
-- secret_sealed) and until when deliveries still carry its signature too;
-- both NULL when there is none. secret_version counts rotations.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_sealed TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN secret_version INTEGER NOT NULL DEFAULT 1;
-- Deliveries per second the merchant allows (NULL: no limit).
ALTER TABLE webhook_endpoints ADD COLUMN max_rate INTEGER;

-- A rotation's Idempotency-Key: a repeat answers the secret that rotation
-- made, kept sealed on the endpoint, while it is still the current one.
CREATE TABLE webhook_secret_rotations (
    merchant_id    TEXT NOT NULL,
    livemode       BOOLEAN NOT NULL,
    idem_principal TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    idem_hash      TEXT NOT NULL,
    endpoint_id    TEXT NOT NULL,
    secret_version INTEGER NOT NULL,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, livemode, idem_principal, idem_key)
);

-- The rate limit's state per endpoint with a max_rate: the theoretical time
-- (micros) at which the next attempt may start. Written only by claims,
-- which are serialised across processes, so processes sharing the database
-- share one rate.
CREATE TABLE webhook_endpoint_rates (
    endpoint_id TEXT PRIMARY KEY,
    next_at     BIGINT NOT NULL
);

-- A failed delivery that recover sent again (its new delivery has
-- recovery TRUE and is left out of the redelivery caps).
ALTER TABLE webhook_deliveries ADD COLUMN recovered_at BIGINT;
ALTER TABLE webhook_deliveries ADD COLUMN recovery BOOLEAN NOT NULL DEFAULT FALSE;
-- Recover walks an endpoint's failed deliveries not yet recovered, by time.
CREATE INDEX webhook_deliveries_recoverable ON webhook_deliveries (endpoint_id, created_at, id)
    WHERE status = 'failed' AND recovered_at IS NULL;
