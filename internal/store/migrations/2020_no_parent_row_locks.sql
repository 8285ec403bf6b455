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
SELECT 1; -- engine-specific
SELECT 1; -- engine-specific
