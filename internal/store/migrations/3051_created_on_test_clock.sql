-- A payment intent or an event made by a test clock's advance shows the
-- clock's time in created_at: clock_created_at keeps it (NULL for anything
-- else). created_at stays the real time, which retention, expiry and the
-- created[...] list filters use (as invoices and customers, 2700).
ALTER TABLE payment_intents ADD COLUMN clock_created_at BIGINT;
ALTER TABLE events ADD COLUMN clock_created_at BIGINT;
