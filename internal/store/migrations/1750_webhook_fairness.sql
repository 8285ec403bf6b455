-- Webhook delivery that one merchant cannot stall: the per-endpoint circuit
-- breaker's state, and the indexes the fair claim and the redelivery caps
-- read.

-- Consecutive failed attempts (reset by any 2xx) and when the first of them
-- was made; disabled_reason is 'repeated_failure' when payd disabled the
-- endpoint itself (NULL when enabled, or disabled by the merchant).
ALTER TABLE webhook_endpoints ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN failing_since BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at BIGINT;

-- The claim takes each endpoint's due deliveries oldest first, and counts an
-- endpoint's waiting queue.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
-- Attempts in flight (leased), counted per endpoint and merchant at claim.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id) WHERE lease IS NOT NULL;
-- Redeliveries of a merchant and mode in the last hour.
CREATE INDEX webhook_deliveries_redelivered ON webhook_deliveries (merchant_id, livemode, created_at) WHERE redelivery = TRUE;
