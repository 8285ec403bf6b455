-- The write path: an idempotent request that must call a provider between
-- two writes commits a recovery point on its key (a name and a reference,
-- usually the id of what it created), so a retry after a crash resumes there.
ALTER TABLE idempotency_keys ADD COLUMN recovery_point TEXT;
ALTER TABLE idempotency_keys ADD COLUMN recovery_ref TEXT;
