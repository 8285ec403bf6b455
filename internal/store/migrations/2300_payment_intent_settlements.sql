-- Captures and voids of held card authorisations sent to a live card
-- gateway (internal/payments, settle.go). A row is written, with the
-- intent still requires_capture, before the gateway is called, and deleted
-- in the transaction that records the gateway's answer (the capture's
-- ledger credit, or the cancel). The primary key makes one settlement per
-- intent at a time: of a capture, a cancel and the expiry job racing, the
-- one whose row is written first is the one sent. A row left behind (the
-- answer was lost, payd died during the call) is finished by a retry of its
-- request or by reconciliation, which asks the gateway and, if the call
-- never arrived, sends it again under the same idempotency key.
CREATE TABLE payment_intent_settlements (
    payment_intent_id TEXT PRIMARY KEY,
    merchant_id       TEXT NOT NULL,
    livemode          BOOLEAN NOT NULL,
    operation         TEXT NOT NULL CHECK (operation IN ('capture', 'void')),
    amount_minor      BIGINT NOT NULL CHECK (amount_minor >= 0),
    cancellation_reason TEXT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
-- Reconciliation's scan: oldest first.
CREATE INDEX payment_intent_settlements_open ON payment_intent_settlements (updated_at);
