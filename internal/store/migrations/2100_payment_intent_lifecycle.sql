-- Payment intent lifecycle (internal/payments): cancel, expiry of abandoned
-- intents, manual capture of card payments.
--
-- A new status, requires_capture: a card authorised but not captured yet.
-- The status CHECK of 0100 is widened to take it. SQLite cannot alter a
-- CHECK constraint, and rebuilding the table would have to name every column
-- and index other migrations gave it; so on SQLite the table's stored
-- definition is edited in place (SQLite's documented way to change a
-- constraint that every existing row satisfies: no row is rewritten), the
-- schema reloaded on this connection, and the CREATE INDEX statements below
-- bump the schema cookie so every other connection reloads it too.
PRAGMA writable_schema = ON; -- engine-specific
UPDATE sqlite_schema SET sql = replace(sql, '''compliance_review''))', '''compliance_review'',''requires_capture''))') WHERE type = 'table' AND name = 'payment_intents'; -- engine-specific
PRAGMA writable_schema = RESET; -- engine-specific

-- Why a cancelled intent was cancelled: duplicate, fraudulent,
-- requested_by_customer, abandoned (expiry, capture window); NULL until a
-- cancel (provider refusals carry last_error instead).
ALTER TABLE payment_intents ADD COLUMN cancellation_reason TEXT;
-- automatic (the authorisation captures) or manual (card payments only:
-- the authorisation waits in requires_capture for POST .../capture).
ALTER TABLE payment_intents ADD COLUMN capture_method TEXT NOT NULL DEFAULT 'automatic' CHECK (capture_method IN ('automatic','manual'));
-- What a requires_capture intent may still capture; 0 in every other state.
ALTER TABLE payment_intents ADD COLUMN amount_capturable_minor BIGINT NOT NULL DEFAULT 0 CHECK (amount_capturable_minor >= 0);

-- The expiry job cancels intents still requires_action PAYD_INTENT_EXPIRY
-- after creation, and authorisations still requires_capture
-- PAYD_CAPTURE_WINDOW after they were authorised (updated_at: nothing moves
-- a requires_capture intent but its capture or cancel). Each partial index
-- holds only the intents in its state, oldest first, so a run reads the
-- intents that expire and no others, however large the table.
CREATE INDEX payment_intents_awaiting_action ON payment_intents (created_at, id) WHERE status = 'requires_action';
CREATE INDEX payment_intents_awaiting_capture ON payment_intents (updated_at, id) WHERE status = 'requires_capture';
