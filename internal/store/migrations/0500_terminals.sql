-- Terminals: the registry of card-present devices and the log of their
-- card-present transactions. No card data is stored here or anywhere: a
-- terminal payment keeps only the KSN (sent in clear by the device), brand,
-- last4 and entry mode; the payment itself is a payment intent.

CREATE TABLE terminals (
    id              TEXT PRIMARY KEY,
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    livemode        BOOLEAN NOT NULL,
    serial_number   TEXT NOT NULL,
    model           TEXT NOT NULL CHECK (model IN ('countertop','mobile')),
    outlet_id       TEXT,
    label           TEXT,
    metadata        TEXT NOT NULL DEFAULT '{}',
    status          TEXT NOT NULL CHECK (status IN ('inactive','active','deregistered')),
    -- The initial key id of the device's DUKPT key (from its first accepted
    -- KSN) and the highest transaction counter accepted: replay protection.
    ksn_key_id      TEXT,
    ksn_counter     BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    activated_at    BIGINT,
    deregistered_at BIGINT
);
CREATE INDEX terminals_merchant ON terminals (merchant_id, livemode, id);
-- A serial number is registered once per merchant and mode until deregistered.
CREATE UNIQUE INDEX terminals_serial ON terminals (merchant_id, livemode, serial_number) WHERE status <> 'deregistered';

CREATE TABLE terminal_payments (
    id                TEXT PRIMARY KEY,
    terminal_id       TEXT NOT NULL REFERENCES terminals (id) ON DELETE CASCADE,
    merchant_id       TEXT NOT NULL,
    livemode          BOOLEAN NOT NULL,
    principal_id      TEXT NOT NULL,
    idempotency_key   TEXT NOT NULL,
    ksn               TEXT NOT NULL,
    ksn_counter       BIGINT NOT NULL,
    amount_minor      BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    brand             TEXT NOT NULL,
    last4             TEXT NOT NULL,
    entry_mode        TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('authorizing','succeeded','canceled')),
    payment_intent_id TEXT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (terminal_id, ksn_counter)
);
CREATE INDEX terminal_payments_intent ON terminal_payments (payment_intent_id);
