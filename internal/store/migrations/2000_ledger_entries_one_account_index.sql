-- ledger_entries_account_history (account_id, id, amount) answers every
-- lookup by account that ledger_entries_account (account_id) did: the
-- narrower index only cost each posted entry one more index insert.
DROP INDEX ledger_entries_account;
