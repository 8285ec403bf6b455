-- How many times the customer's card was declined on an intent's hosted card
-- page while the intent let them try another card (internal/payments,
-- MaxCardAttempts); the last allowed decline cancels the intent.
ALTER TABLE payment_intents ADD COLUMN page_attempts INTEGER NOT NULL DEFAULT 0;
