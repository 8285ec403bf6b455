-- Refunds (re_...) of succeeded payment intents. A refund holds its amount
-- in the merchant's reserved balance until its outcome is known. The intent
-- keeps two running sums of its refunds: amount_refunding_minor (every
-- refund not failed or canceled; an UPDATE guard keeps it at most
-- amount_captured_minor, so racing refunds never refund more than was
-- captured) and amount_refunded_minor (succeeded refunds only).

ALTER TABLE payment_intents ADD COLUMN amount_refunding_minor BIGINT NOT NULL DEFAULT 0 CHECK (amount_refunding_minor >= 0);
ALTER TABLE payment_intents ADD COLUMN amount_refunded_minor BIGINT NOT NULL DEFAULT 0 CHECK (amount_refunded_minor >= 0);

CREATE TABLE refunds (
    id              TEXT PRIMARY KEY,
    merchant_id     TEXT NOT NULL,
    livemode        BOOLEAN NOT NULL,
    payment_intent  TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('requires_approval','pending','succeeded','failed','canceled')),
    amount_minor    BIGINT NOT NULL CHECK (amount_minor > 0),
    currency        TEXT NOT NULL,
    provider        TEXT NOT NULL,
    reason          TEXT,
    metadata        TEXT NOT NULL DEFAULT '{}',
    scenario        TEXT NOT NULL DEFAULT '',
    failure_code    TEXT,
    failure_message TEXT,
    provider_ref    TEXT NOT NULL DEFAULT '',
    created_by      TEXT NOT NULL,
    approved_by     TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    succeeded_at    BIGINT,
    failed_at       BIGINT,
    canceled_at     BIGINT
);
CREATE INDEX refunds_list ON refunds (merchant_id, livemode, id);
CREATE INDEX refunds_intent ON refunds (merchant_id, livemode, payment_intent, id);
CREATE INDEX refunds_status ON refunds (merchant_id, livemode, status, id);
-- Reconciliation finds live refunds left pending.
CREATE INDEX refunds_waiting ON refunds (status, livemode, updated_at);
CREATE INDEX refunds_purge ON refunds (livemode, created_at);
