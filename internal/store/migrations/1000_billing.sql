-- Billing (internal/billing): test clocks, customers, subscriptions and
-- invoices. Times are BIGINT microseconds; money BIGINT minor units. Every
-- status change is a compare-and-set on (status, version). Billing tables
-- reference each other by id without foreign keys, so the sandbox purge
-- (which deletes test-mode rows by age, table by table) never trips over a
-- younger child row.

CREATE TABLE test_clocks (
    id           TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants (id),
    livemode     BOOLEAN NOT NULL,
    name         TEXT,
    frozen_time  BIGINT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('ready','advancing')),
    version      BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX test_clocks_list ON test_clocks (merchant_id, livemode, id);

CREATE TABLE customers (
    id               TEXT PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants (id),
    livemode         BOOLEAN NOT NULL,
    name             TEXT NOT NULL,
    email            TEXT,
    phone            TEXT,
    metadata         TEXT NOT NULL DEFAULT '{}',
    default_payment  TEXT,
    test_clock_id    TEXT,
    deleted_at       BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX customers_list ON customers (merchant_id, livemode, id);
CREATE INDEX customers_email ON customers (merchant_id, livemode, email, id);
CREATE INDEX customers_phone ON customers (merchant_id, livemode, phone, id);

CREATE TABLE subscriptions (
    id                    TEXT PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants (id),
    livemode              BOOLEAN NOT NULL,
    customer_id           TEXT NOT NULL,
    test_clock_id         TEXT,
    status                TEXT NOT NULL CHECK (status IN ('trialing','active','past_due','unpaid','canceled')),
    currency              TEXT NOT NULL,
    interval_unit         TEXT NOT NULL CHECK (interval_unit IN ('day','week','month','year')),
    interval_count        INTEGER NOT NULL CHECK (interval_count >= 1),
    collection_method     TEXT NOT NULL CHECK (collection_method IN ('charge_automatically','send_invoice')),
    days_until_due        INTEGER,
    metadata              TEXT NOT NULL DEFAULT '{}',
    items                 TEXT NOT NULL,
    pending_lines         TEXT NOT NULL DEFAULT '[]',
    billing_anchor        BIGINT NOT NULL,
    trial_end             BIGINT,
    period_number         BIGINT NOT NULL DEFAULT 0,
    current_period_start  BIGINT NOT NULL,
    current_period_end    BIGINT NOT NULL,
    cancel_at_period_end  BOOLEAN NOT NULL DEFAULT FALSE,
    canceled_at           BIGINT,
    ended_at              BIGINT,
    latest_invoice        TEXT,
    version               BIGINT NOT NULL DEFAULT 0,
    created_at            BIGINT NOT NULL,
    start_date            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX subscriptions_list ON subscriptions (merchant_id, livemode, id);
CREATE INDEX subscriptions_customer ON subscriptions (customer_id);
-- The billing clock's scan: what is due, per clock (NULL: real time).
CREATE INDEX subscriptions_due ON subscriptions (test_clock_id, current_period_end) WHERE status <> 'canceled';

CREATE TABLE invoices (
    id                     TEXT PRIMARY KEY,
    merchant_id            TEXT NOT NULL REFERENCES merchants (id),
    livemode               BOOLEAN NOT NULL,
    customer_id            TEXT NOT NULL,
    subscription_id        TEXT,
    test_clock_id          TEXT,
    status                 TEXT NOT NULL CHECK (status IN ('draft','open','paid','void','uncollectible')),
    currency               TEXT NOT NULL,
    collection_method      TEXT NOT NULL CHECK (collection_method IN ('charge_automatically','send_invoice')),
    days_until_due         INTEGER,
    billing_reason         TEXT NOT NULL,
    lines                  TEXT NOT NULL,
    amount_due             BIGINT NOT NULL CHECK (amount_due >= 0),
    amount_paid            BIGINT NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
    period_start           BIGINT,
    period_end             BIGINT,
    due_date               BIGINT,
    payment_intent         TEXT,
    attempt_count          INTEGER NOT NULL DEFAULT 0,
    next_payment_attempt   BIGINT,
    attempt_due            BIGINT,
    attempt_claimed_until  BIGINT,
    hosted_token           TEXT NOT NULL,
    version                BIGINT NOT NULL DEFAULT 0,
    created_at             BIGINT NOT NULL,
    effective_at           BIGINT NOT NULL,
    finalized_at           BIGINT,
    paid_at                BIGINT,
    voided_at              BIGINT,
    updated_at             BIGINT NOT NULL
);
-- One invoice per subscription period, whoever bills it: several billing
-- runners (or a re-run after a crash) insert the same period at most once.
CREATE UNIQUE INDEX invoices_period ON invoices (subscription_id, period_start);
CREATE INDEX invoices_list ON invoices (merchant_id, livemode, id);
CREATE INDEX invoices_customer ON invoices (customer_id, id);
CREATE INDEX invoices_subscription_list ON invoices (subscription_id, id);
CREATE INDEX invoices_attempts ON invoices (test_clock_id, next_payment_attempt) WHERE status = 'open';
CREATE INDEX invoices_claims ON invoices (attempt_claimed_until) WHERE status = 'open' AND attempt_claimed_until IS NOT NULL;
