package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestPostMany: many transactions land as Post would write them one by one
// (each its own transaction and entries), the balances move by the sums, and
// a set that would take a merchant-facing account below zero writes nothing.
func TestPostMany(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := "mer_many"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, m, "DJF", 10_000) }); err != nil {
			t.Fatal(err)
		}
		move := func(ref string, from, to ledger.AccountKind, amt int64) ledger.Transaction {
			return ledger.Transaction{MerchantID: m, Kind: "test", Reference: ref, Entries: []ledger.Entry{
				{acct(m, "DJF", from), -amt}, {acct(m, "DJF", to), amt}}}
		}
		var txns []ledger.Transaction
		for i := 0; i < 1200; i++ { // more than one multi-row chunk
			txns = append(txns, move("r", ledger.Available, ledger.Reserved, 5))
		}
		var ids []string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			ids, err = ledger.PostMany(ctx, tx, txns)
			return err
		})
		if err != nil || len(ids) != 1200 {
			t.Fatalf("%v, %d ids", err, len(ids))
		}
		var n, entries int
		db.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = 'r'").Scan(&n)
		db.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.reference = 'r'").Scan(&entries)
		if n != 1200 || entries != 2400 {
			t.Fatalf("%d transactions, %d entries", n, entries)
		}
		av, _ := ledger.AccountBalance(ctx, db, acct(m, "DJF", ledger.Available))
		rs, _ := ledger.AccountBalance(ctx, db, acct(m, "DJF", ledger.Reserved))
		if av != 4000 || rs != 6000 {
			t.Fatalf("available %d reserved %d", av, rs)
		}
		// Short by one: nothing written.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.PostMany(ctx, tx, []ledger.Transaction{
				move("short", ledger.Reserved, ledger.Available, 3000), move("short", ledger.Reserved, ledger.Available, 3001)})
			return err
		})
		if !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("got %v", err)
		}
		db.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = 'short'").Scan(&n)
		if n != 0 {
			t.Fatal("a refused set left transactions")
		}
		// An unbalanced member refuses the set.
		bad := move("bad", ledger.Reserved, ledger.Available, 1)
		bad.Entries[1].Amount = 2
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.PostMany(ctx, tx, []ledger.Transaction{move("bad", ledger.Reserved, ledger.Available, 1), bad})
			return err
		})
		if !errors.Is(err, ledger.ErrUnbalanced) {
			t.Fatalf("got %v", err)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}
