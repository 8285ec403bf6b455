-- The sandbox purge deletes old test-mode payment intents merchant by
-- merchant through portal_payment_intents_created (merchant_id, livemode,
-- created_at), so the intents no longer keep an index on (livemode,
-- created_at) that every new intent paid for to serve an hourly job alone.
DROP INDEX payment_intents_purge;
