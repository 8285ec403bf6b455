-- Storing a request's answer changes its key's state, and the recovery-point
-- index named state in its predicate: PostgreSQL could not update the row in
-- place (a HOT update), so every stored answer wrote a new entry into each of
-- the table's indexes. The index now covers the keys that carry a reference
-- (storing an answer clears it; only keys in flight keep one), which answers
-- the same lookups and leaves the answer's update free to be HOT; on
-- PostgreSQL the table's pages keep room for that update (SQLite has no such
-- setting).
DROP INDEX idempotency_keys_recovery_ref;
CREATE INDEX idempotency_keys_recovery_ref ON idempotency_keys (recovery_ref) WHERE recovery_ref IS NOT NULL;
SELECT 1; -- engine-specific
