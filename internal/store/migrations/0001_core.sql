-- Core: merchants, principals (API keys, portal users), idempotency, ledger,
-- the event outbox and the job queue. Times are BIGINT microseconds since the
-- Unix epoch in both engines; money is BIGINT minor units.

CREATE TABLE merchants (
    id                       TEXT PRIMARY KEY,
    name                     TEXT NOT NULL,
    kyc_status               TEXT NOT NULL DEFAULT 'pending' CHECK (kyc_status IN ('pending','approved','rejected')),
    bic                      TEXT,
    deferred_settlement      BOOLEAN NOT NULL DEFAULT FALSE,
    approval_threshold_minor BIGINT,
    created_at               BIGINT NOT NULL
);
CREATE UNIQUE INDEX merchants_bic ON merchants (bic) WHERE bic IS NOT NULL;

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants (id),
    livemode     BOOLEAN NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('secret','publishable')),
    secret_hash  TEXT NOT NULL UNIQUE,
    display      TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, livemode);

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    merchant_id   TEXT NOT NULL REFERENCES merchants (id),
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin','approver','viewer')),
    created_at    BIGINT NOT NULL,
    disabled_at   BIGINT
);

CREATE TABLE provider_connections (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    provider    TEXT NOT NULL,
    config      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, provider)
);

CREATE TABLE idempotency_keys (
    merchant_id   TEXT NOT NULL,
    livemode      BOOLEAN NOT NULL,
    principal_id  TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    method        TEXT NOT NULL,
    path          TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('in_flight','done')),
    status_code   INTEGER,
    content_type  TEXT,
    body          BLOB,
    locked_until  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, livemode, principal_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE ledger_accounts (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL,
    livemode    BOOLEAN NOT NULL,
    currency    TEXT NOT NULL,
    kind        TEXT NOT NULL,
    provider    TEXT NOT NULL DEFAULT '',
    balance     BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    UNIQUE (merchant_id, livemode, currency, kind, provider)
);

CREATE TABLE ledger_transactions (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL,
    livemode    BOOLEAN NOT NULL,
    kind        TEXT NOT NULL,
    reference   TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);
CREATE INDEX ledger_transactions_ref ON ledger_transactions (reference);
CREATE INDEX ledger_transactions_purge ON ledger_transactions (livemode, created_at);

CREATE TABLE ledger_entries (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id TEXT NOT NULL REFERENCES ledger_transactions (id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL REFERENCES ledger_accounts (id),
    currency       TEXT NOT NULL,
    amount         BIGINT NOT NULL CHECK (amount <> 0)
);
CREATE INDEX ledger_entries_txn ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id);

CREATE TABLE events (
    id            TEXT PRIMARY KEY,
    merchant_id   TEXT NOT NULL,
    livemode      BOOLEAN NOT NULL,
    type          TEXT NOT NULL,
    object_type   TEXT NOT NULL,
    object_id     TEXT NOT NULL,
    data          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    dispatched_at BIGINT
);
CREATE INDEX events_merchant ON events (merchant_id, livemode, id);
CREATE INDEX events_object ON events (object_id);
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE jobs (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    unique_key   TEXT UNIQUE,
    payload      TEXT NOT NULL DEFAULT '{}',
    status       TEXT NOT NULL CHECK (status IN ('queued','running','done','failed')),
    run_at       BIGINT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 10,
    locked_by    TEXT,
    locked_until BIGINT,
    last_error   TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX jobs_ready ON jobs (status, run_at);

-- Objects created under the sandbox_webhook_fail scenario: the first delivery
-- attempt of each of their events is recorded failed without sending.
CREATE TABLE sandbox_webhook_fail (
    object_id  TEXT PRIMARY KEY,
    livemode   BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL
);
