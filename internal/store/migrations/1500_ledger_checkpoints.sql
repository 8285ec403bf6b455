-- Balance checkpoints: the running balance of an available account at every
-- Nth entry, written by a background job (ledger.WriteCheckpoints) well after
-- the postings, so no posting ever updates them. A balance transaction's
-- balance_after then sums at most N index entries from the nearest
-- checkpoint above it, however deep in the history it lies.
CREATE TABLE ledger_checkpoints (
    account_id TEXT NOT NULL REFERENCES ledger_accounts (id),
    entry_id   BIGINT NOT NULL,
    balance    BIGINT NOT NULL,
    PRIMARY KEY (account_id, entry_id)
);
