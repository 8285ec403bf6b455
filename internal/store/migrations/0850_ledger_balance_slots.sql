-- Balances without a hot row: an account's balance is the sum of up to N
-- rows (slots) here instead of one column of ledger_accounts, so concurrent
-- postings to one account update different rows instead of queueing on one
-- row lock. internal/ledger decides how many slots an engine uses and keeps
-- every slot of a merchant-facing account at or above zero.
CREATE TABLE ledger_balances (
    account_id TEXT NOT NULL REFERENCES ledger_accounts (id),
    slot       INTEGER NOT NULL,
    balance    BIGINT NOT NULL,
    PRIMARY KEY (account_id, slot)
);
INSERT INTO ledger_balances (account_id, slot, balance) SELECT id, 0, balance FROM ledger_accounts;
-- engine-specific: SQLite keeps one slot per account, the row above
-- Nothing reads the old column any more; dropping it makes a stray reader fail loudly.
ALTER TABLE ledger_accounts DROP COLUMN balance;
