-- On PostgreSQL a foreign key check locks the parent row (FOR KEY SHARE)
-- until the inserting transaction ends. Every new payment intent locked its
-- merchant's row and every ledger entry its account's row, so concurrent
-- requests of one merchant shared-locked the same few rows: PostgreSQL keeps
-- such a lock held by several transactions as a multixact, which it writes
-- and looks up again for every locker, the hot row the balance slots removed
-- brought back as locks. These two checks go on PostgreSQL: a payment
-- intent's merchant is the authenticated principal's (and merchants are never
-- deleted; payouts, refunds and events carry no such key either), and a ledger
-- entry's account is one the same transaction resolved or created. ledger
-- verification checks that every entry's account exists. SQLite keeps both:
-- its checks take no lock.
ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_merchant_id_fkey; -- engine-specific
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_id_fkey; -- engine-specific
