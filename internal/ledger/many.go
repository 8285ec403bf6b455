package ledger

import (
	"context"
	"fmt"
	"sort"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// manyChunk bounds the rows of one multi-row INSERT, keeping the bound
// parameters well under both engines' limits.
const manyChunk = 500

// PostMany writes many transactions inside tx at once, for work that moves
// money for thousands of objects in one database transaction (the rows of a
// payout batch). Each transaction is validated as Post validates it and is
// stored as its own ledger transaction with its own entries; what differs is
// the cost: the transactions and entries are inserted with multi-row
// statements and each account's balance is updated once, by the sum of its
// entries. The guards are those of Post (no merchant-facing account below
// zero, no overflow), applied to each account's balance after the whole set
// rather than after each transaction. It returns the transactions' ids in order; on any error
// the caller must roll back.
func PostMany(ctx context.Context, tx *store.Tx, txns []Transaction) ([]string, error) {
	if len(txns) == 0 {
		return nil, nil
	}
	type acct struct {
		ref AccountRef
		sum int64
		id  string
	}
	accounts := map[string]*acct{}
	txIDs := make([]string, len(txns))
	for i, t := range txns {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("transaction %d (%s): %w", i, t.Reference, err)
		}
		txIDs[i] = ids.New("ltx_")
		if t.Overdraw {
			return nil, fmt.Errorf("transaction %d (%s): %w: an overdraw is posted with Post, not netted by PostMany", i, t.Reference, ErrInvalidEntry)
		}
		for _, e := range t.Entries {
			k := e.Account.key()
			a := accounts[k]
			if a == nil {
				a = &acct{ref: e.Account}
				accounts[k] = a
			}
			s, err := money.Add(a.sum, e.Amount)
			if err != nil {
				return nil, fmt.Errorf("%w: the entries of %s %s overflow", ErrInvalidEntry, e.Account.Kind, e.Account.Currency)
			}
			a.sum = s
		}
	}
	keys := make([]string, 0, len(accounts))
	for k := range accounts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the order Post uses, so concurrent posts cannot deadlock
	for _, k := range keys {
		a := accounts[k]
		id, err := accountID(ctx, tx, a.ref)
		if err != nil {
			return nil, err
		}
		a.id = id
	}
	now := store.Micros(tx.Now())
	for start := 0; start < len(txns); start += manyChunk {
		end := min(start+manyChunk, len(txns))
		q := "INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at) VALUES " + store.Rows(end-start, 6)
		args := make([]any, 0, (end-start)*6)
		for i := start; i < end; i++ {
			t := txns[i]
			args = append(args, txIDs[i], t.MerchantID, t.Livemode, t.Kind, t.Reference, now)
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return nil, err
		}
	}
	var entries []entryRow
	for i, t := range txns {
		for _, e := range t.Entries {
			entries = append(entries, entryRow{txIDs[i], accounts[e.Account.key()].id, e.Account.Currency, e.Amount})
		}
	}
	for start := 0; start < len(entries); start += manyChunk {
		q, args := insertEntries(entries[start:min(start+manyChunk, len(entries))])
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return nil, err
		}
	}
	// Balances last: their rows are what concurrent posts wait for, so they
	// are locked for the shortest time.
	for _, k := range keys {
		a := accounts[k]
		if a.sum != 0 {
			if err := applyBalance(ctx, tx, a.id, Entry{Account: a.ref, Amount: a.sum}); err != nil {
				return nil, err
			}
		}
	}
	return txIDs, nil
}
