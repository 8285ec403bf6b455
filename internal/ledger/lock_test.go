package ledger_test

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func TestLockBalances(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		avail := ledger.AccountRef{MerchantID: "mer_lock", Currency: "DJF", Kind: ledger.Available}
		other := ledger.AccountRef{MerchantID: "mer_other", Currency: "DJF", Kind: ledger.Available}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: "mer_lock", Kind: "test", Entries: []ledger.Entry{
				{Account: avail, Amount: 70},
				{Account: ledger.AccountRef{MerchantID: "mer_lock", Currency: "DJF", Kind: ledger.SandboxFunding}, Amount: -70},
			}})
			if err != nil {
				return err
			}
			got, err := ledger.LockBalances(ctx, tx, avail, other, avail)
			if err != nil {
				return err
			}
			if len(got) != 2 || got[avail] != 70 || got[other] != 0 {
				t.Fatalf("balances %v", got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
