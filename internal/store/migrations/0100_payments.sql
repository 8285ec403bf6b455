-- Payment intents (internal/payments). One row per intent; every status
-- change is a compare-and-set on (status, version). Card numbers, PINs and
-- OTPs are never stored: payment_method_details holds brand and last4 only,
-- and a hosted page's token only as its SHA-256 (page_token_hash).

CREATE TABLE payment_intents (
    id                     TEXT PRIMARY KEY,
    merchant_id            TEXT NOT NULL REFERENCES merchants (id),
    livemode               BOOLEAN NOT NULL,
    status                 TEXT NOT NULL CHECK (status IN ('requires_action','processing','succeeded','canceled','compliance_review')),
    amount_minor           BIGINT NOT NULL CHECK (amount_minor > 0),
    amount_captured_minor  BIGINT NOT NULL DEFAULT 0 CHECK (amount_captured_minor >= 0 AND amount_captured_minor <= amount_minor),
    currency               TEXT NOT NULL,
    provider               TEXT NOT NULL,
    flow                   TEXT NOT NULL,
    customer_msisdn        TEXT,
    description            TEXT,
    metadata               TEXT NOT NULL DEFAULT '{}',
    return_url             TEXT,
    next_action            TEXT,
    last_error             TEXT,
    payment_method_details TEXT,
    scenario               TEXT NOT NULL DEFAULT '',
    page_step              TEXT NOT NULL DEFAULT '',
    page_token_hash        TEXT,
    provider_ref           TEXT NOT NULL DEFAULT '',
    idempotency_key        TEXT,
    version                BIGINT NOT NULL DEFAULT 0,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL,
    succeeded_at           BIGINT,
    canceled_at            BIGINT
);
CREATE INDEX payment_intents_list ON payment_intents (merchant_id, livemode, id);
CREATE INDEX payment_intents_status ON payment_intents (merchant_id, livemode, status, id);
CREATE INDEX payment_intents_provider ON payment_intents (merchant_id, livemode, provider, id);
CREATE INDEX payment_intents_purge ON payment_intents (livemode, created_at);
-- Card-present intents: one per terminal request's Idempotency-Key.
CREATE UNIQUE INDEX payment_intents_idempotency ON payment_intents (merchant_id, livemode, idempotency_key) WHERE idempotency_key IS NOT NULL;
