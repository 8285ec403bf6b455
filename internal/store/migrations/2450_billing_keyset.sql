-- A billing run claims due subscriptions and due payment attempts a chunk
-- at a time. Each chunk's scan now starts after the last row the round
-- claimed (a keyset on the time and the id) instead of at the beginning,
-- where it walked again every row the earlier chunks had moved (on
-- PostgreSQL, the index entries of their old versions, dead but not yet
-- vacuumed): that made a run's cost grow with the square of its size.
-- These indexes end with id so the keyset is an index range in order; they
-- replace the two without it, whose queries (a previous release's too) they
-- serve as well, being the same columns followed by id.
CREATE INDEX subscriptions_due_keyset ON subscriptions (test_clock_id, current_period_end, id) WHERE status <> 'canceled';
CREATE INDEX invoices_attempts_keyset ON invoices (test_clock_id, next_payment_attempt, id) WHERE status = 'open';
DROP INDEX subscriptions_due;
DROP INDEX invoices_attempts;
-- The claims left expired by a runner that died, by time line too, so the
-- scan of one test clock's claims reads no other's.
CREATE INDEX invoices_claims_keyset ON invoices (test_clock_id, attempt_claimed_until, id) WHERE status = 'open' AND attempt_claimed_until IS NOT NULL;
DROP INDEX invoices_claims;
