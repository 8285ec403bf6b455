-- Reconciliation asks whether a request's key still holds an object at a
-- recovery point (the request may resume and call the provider), by the
-- point's reference: only keys in flight are indexed.
CREATE INDEX idempotency_keys_recovery_ref ON idempotency_keys (recovery_ref) WHERE state = 'in_flight';
