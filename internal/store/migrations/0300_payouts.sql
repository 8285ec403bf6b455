-- Payouts: single payouts, bulk batches (variant A "items" po_bulk_..., variant
-- B "rows" batch_...) and the rows of a variant B batch waiting for approval.
-- The payouts table is also the dispatch queue: a row with dispatch_at set is
-- waiting to be sent to its rail (pending), or in flight until dispatch_at
-- (processing, leased by the claim claim_id).

CREATE TABLE payout_batches (
    id                 TEXT PRIMARY KEY,
    merchant_id        TEXT NOT NULL,
    livemode           BOOLEAN NOT NULL,
    variant            TEXT NOT NULL CHECK (variant IN ('items','rows')),
    status             TEXT NOT NULL CHECK (status IN ('pending_approval','processing','completed','canceled')),
    currency           TEXT,
    description        TEXT,
    row_count          INTEGER NOT NULL,
    total_amount_minor BIGINT NOT NULL,
    rows_succeeded     INTEGER NOT NULL DEFAULT 0,
    rows_failed        INTEGER NOT NULL DEFAULT 0,
    rows_canceled      INTEGER NOT NULL DEFAULT 0,
    rows_pending       INTEGER NOT NULL DEFAULT 0,
    dispatched         BOOLEAN NOT NULL DEFAULT FALSE,
    created_by         TEXT NOT NULL,
    approved_by        TEXT,
    approved_at        BIGINT,
    canceled_at        BIGINT,
    completed_at       BIGINT,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX payout_batches_merchant ON payout_batches (merchant_id, livemode, id);
CREATE INDEX payout_batches_open ON payout_batches (merchant_id, livemode, variant, status);

CREATE TABLE payout_batch_rows (
    batch_id          TEXT NOT NULL REFERENCES payout_batches (id) ON DELETE CASCADE,
    row_no            INTEGER NOT NULL,
    livemode          BOOLEAN NOT NULL,
    amount            BIGINT NOT NULL CHECK (amount > 0),
    provider          TEXT NOT NULL,
    recipient_msisdn  TEXT,
    recipient_account TEXT,
    recipient_name    TEXT,
    description       TEXT,
    reference         TEXT NOT NULL,
    scenario          TEXT,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (batch_id, row_no),
    UNIQUE (batch_id, reference)
);

CREATE TABLE payouts (
    id                 TEXT PRIMARY KEY,
    merchant_id        TEXT NOT NULL,
    livemode           BOOLEAN NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('requires_approval','held','pending','processing','succeeded','failed','canceled')),
    amount             BIGINT NOT NULL CHECK (amount > 0),
    currency           TEXT NOT NULL,
    provider           TEXT NOT NULL,
    recipient_msisdn   TEXT,
    recipient_account  TEXT,
    recipient_name     TEXT,
    description        TEXT,
    metadata           TEXT NOT NULL DEFAULT '{}',
    reference          TEXT NOT NULL,
    batch_id           TEXT,
    batch_row          INTEGER,
    screening          TEXT NOT NULL,
    scenario           TEXT,
    needs_approval     BOOLEAN NOT NULL DEFAULT FALSE,
    compliance_cleared BOOLEAN NOT NULL DEFAULT FALSE,
    failure_code       TEXT,
    failure_message    TEXT,
    created_by         TEXT NOT NULL,
    approved_by        TEXT,
    reviewed_by        TEXT,
    review_note        TEXT,
    dispatch_at        BIGINT,
    dispatch_attempts  INTEGER NOT NULL DEFAULT 0,
    claim_id           TEXT,
    retries            INTEGER NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    succeeded_at       BIGINT,
    failed_at          BIGINT,
    canceled_at        BIGINT
);
CREATE INDEX payouts_merchant ON payouts (merchant_id, livemode, id);
CREATE INDEX payouts_merchant_status ON payouts (merchant_id, livemode, status, id);
CREATE INDEX payouts_batch ON payouts (batch_id, id);
CREATE UNIQUE INDEX payouts_batch_reference ON payouts (batch_id, reference) WHERE batch_id IS NOT NULL;
CREATE UNIQUE INDEX payouts_single_reference ON payouts (merchant_id, livemode, reference) WHERE batch_id IS NULL;
CREATE INDEX payouts_dispatch ON payouts (dispatch_at) WHERE dispatch_at IS NOT NULL;
CREATE INDEX payouts_batch_dispatch ON payouts (batch_id, dispatch_at) WHERE dispatch_at IS NOT NULL;
