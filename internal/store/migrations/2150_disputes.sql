-- Disputes (dp_...): a cardholder's bank contests a card payment. At most
-- one dispute per payment intent. The intent's disputed flag is set in the
-- transaction that inserts the dispute, and a refund's reserve on the intent
-- checks it under the same row lock, so a dispute and a refund racing never
-- both pass.

ALTER TABLE payment_intents ADD COLUMN disputed BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE disputes (
    id              TEXT PRIMARY KEY,
    merchant_id     TEXT NOT NULL,
    livemode        BOOLEAN NOT NULL,
    payment_intent  TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('needs_response','under_review','won','lost')),
    reason          TEXT NOT NULL CHECK (reason IN ('fraudulent','product_not_received','duplicate','credit_not_processed','general')),
    amount_minor    BIGINT NOT NULL CHECK (amount_minor > 0),
    currency        TEXT NOT NULL,
    provider        TEXT NOT NULL,
    provider_ref    TEXT NOT NULL DEFAULT '',
    evidence        TEXT NOT NULL DEFAULT '{}',
    metadata        TEXT NOT NULL DEFAULT '{}',
    evidence_due_by BIGINT NOT NULL,
    submitted_at    BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    closed_at       BIGINT
);
CREATE UNIQUE INDEX disputes_one_per_intent ON disputes (payment_intent);
CREATE INDEX disputes_list ON disputes (merchant_id, livemode, id);
CREATE INDEX disputes_status ON disputes (merchant_id, livemode, status, id);
CREATE INDEX disputes_purge ON disputes (livemode, created_at);
