-- The portal's search box (internal/portal/search.go). An e-mail address
-- finds customers whatever its case: the lookup reads this index by
-- LOWER(email) instead of every customer of the merchant. The intents a
-- customer's invoices made are found through their invoice: this index
-- holds billing's intents only (invoice_id is NULL for every other one).
CREATE INDEX customers_email_lower ON customers (merchant_id, livemode, LOWER(email), id);
CREATE INDEX payment_intents_by_invoice ON payment_intents (invoice_id) WHERE invoice_id IS NOT NULL;
