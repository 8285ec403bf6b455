-- Bank transfers (ISO 20022): the messages received (for msg_id duplicate
-- detection and identical-message replay), one row per credit transfer
-- transaction (keyed by UETR), and the returns and cancellations against them.
-- Times are BIGINT microseconds; money BIGINT minor units.

CREATE TABLE transfer_messages (
    id           TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL,
    livemode     BOOLEAN NOT NULL,
    msg_id       TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    report       TEXT NOT NULL DEFAULT '',
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    UNIQUE (merchant_id, livemode, msg_id)
);

CREATE TABLE transfers (
    id                    TEXT PRIMARY KEY,
    livemode              BOOLEAN NOT NULL,
    uetr                  TEXT NOT NULL,
    message_id            TEXT,
    msg_id                TEXT NOT NULL,
    msg_created_at        BIGINT,
    end_to_end_id         TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('ACSC','ACSP','ACWP','RJCT')),
    reason_code           TEXT,
    reason_text           TEXT,
    reason_detail         TEXT,
    amount_minor          BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    debtor_name           TEXT NOT NULL,
    debtor_account        TEXT NOT NULL,
    debtor_agent          TEXT NOT NULL,
    creditor_name         TEXT NOT NULL,
    creditor_account      TEXT NOT NULL,
    creditor_agent        TEXT NOT NULL,
    remittance_info       TEXT,
    debtor_merchant_id    TEXT NOT NULL,
    creditor_merchant_id  TEXT,
    returned_amount_minor BIGINT NOT NULL DEFAULT 0 CHECK (returned_amount_minor >= 0),
    screening             TEXT,
    created_by            TEXT NOT NULL,
    reviewed_by           TEXT,
    review_note           TEXT,
    reviewed_at           BIGINT,
    created_at            BIGINT NOT NULL,
    settled_at            BIGINT,
    updated_at            BIGINT NOT NULL,
    UNIQUE (livemode, uetr)
);
CREATE INDEX transfers_debtor ON transfers (debtor_merchant_id, livemode, id);
CREATE INDEX transfers_creditor ON transfers (creditor_merchant_id, livemode, id);
CREATE INDEX transfers_in_flight ON transfers (status) WHERE status IN ('ACSP','ACWP');

CREATE TABLE transfer_returns (
    id           TEXT PRIMARY KEY,
    transfer_id  TEXT NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
    livemode     BOOLEAN NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('return','cancel')),
    source       TEXT NOT NULL,
    msg_id       TEXT,
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    reason_code  TEXT NOT NULL,
    reason_text  TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX transfer_returns_transfer ON transfer_returns (transfer_id, id);
CREATE UNIQUE INDEX transfer_returns_msg ON transfer_returns (transfer_id, msg_id) WHERE msg_id IS NOT NULL;
