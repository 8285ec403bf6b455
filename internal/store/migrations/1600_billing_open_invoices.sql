-- A billing run asks, for each subscription whose period ends, whether an
-- open invoice of it still has a payment attempt due first: a small index
-- of the open invoices by subscription answers that per row, so a run's
-- cost stays linear in the subscriptions it moves.
CREATE INDEX invoices_open_by_subscription ON invoices (subscription_id) WHERE status = 'open';
