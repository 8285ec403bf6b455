-- The invoice a payment intent was created for by billing (its automatic
-- attempts, its manual pay and its hosted page), NULL for every other
-- intent. Billing pays, fails or links an invoice only from an intent whose
-- invoice_id names it: metadata["invoice"] is the merchant's to write, and
-- an intent a merchant made with it pays nothing. Intents made before this
-- column are the ones their invoices recorded.
ALTER TABLE payment_intents ADD COLUMN invoice_id TEXT;
UPDATE payment_intents SET invoice_id = (SELECT i.id FROM invoices i WHERE i.payment_intent = payment_intents.id)
    WHERE id IN (SELECT i.payment_intent FROM invoices i WHERE i.payment_intent IS NOT NULL);
