-- Invoices get a number a person can quote, per merchant and mode:
-- INV-000001, INV-000002, ... (six digits at least; more once past 999999).
-- invoice_numbers holds the last number given; a new invoice takes the next
-- one with an upsert in its own transaction, so numbers are unique and
-- gapless under concurrent creation on both engines (the row is locked
-- until the invoice commits; a rolled-back invoice gives its number back).
ALTER TABLE invoices ADD COLUMN number TEXT;

CREATE TABLE invoice_numbers (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    livemode    BOOLEAN NOT NULL,
    last_number BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, livemode)
);

-- Back-fill: existing invoices are numbered in the order they were made.
UPDATE invoices SET number = 'INV-' || CASE WHEN r.n < 1000000 THEN substr(CAST(1000000 + r.n AS TEXT), 2) ELSE CAST(r.n AS TEXT) END
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY merchant_id, livemode ORDER BY created_at, id) AS n FROM invoices) r
WHERE r.id = invoices.id;

INSERT INTO invoice_numbers (merchant_id, livemode, last_number)
SELECT merchant_id, livemode, COUNT(*) FROM invoices GROUP BY merchant_id, livemode;

-- A previous release's process, still serving during a rolling upgrade,
-- inserts invoices without a number (NULL, which this index allows).
CREATE UNIQUE INDEX invoices_number ON invoices (merchant_id, livemode, number);

-- Objects made on a test clock show the clock's time in created_at; the
-- created_at column keeps the wall-clock time (retention and ordering use it).
ALTER TABLE invoices ADD COLUMN clock_created_at BIGINT;
ALTER TABLE customers ADD COLUMN clock_created_at BIGINT;
