-- Balance transactions and settlement reports (internal/reports) are read
-- models over the append-only ledger; they add indexes, never tables that
-- every posting would have to update.
--
-- A merchant's balance history walks one available account's entries newest
-- first and sums the entries after a row (its balance_after); amount in the
-- key makes both an index-only read.
CREATE INDEX ledger_entries_account_history ON ledger_entries (account_id, id, amount);
-- A day's settlement report reads one merchant's payment and refund postings
-- of a time window.
CREATE INDEX ledger_transactions_report ON ledger_transactions (merchant_id, livemode, kind, created_at);
