package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func TestPurgeKeepsLiveDataAndBalances(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		at := now.Add(-40 * 24 * time.Hour)
		db.SetClock(func() time.Time { return at })
		post := func(live bool, amt int64) {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := events.Emit(ctx, tx, "mer_1", live, "test.event", "thing", "th_1", map[string]int{"a": 1}); err != nil {
					return err
				}
				_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: "mer_1", Livemode: live, Kind: "sandbox_topup", Entries: []ledger.Entry{
					{Account: ledger.AccountRef{MerchantID: "mer_1", Livemode: live, Currency: "DJF", Kind: ledger.Available}, Amount: amt},
					{Account: ledger.AccountRef{MerchantID: "mer_1", Livemode: live, Currency: "DJF", Kind: ledger.SandboxFunding}, Amount: -amt}}})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		post(false, 100) // old test data
		post(true, 70)   // old live data
		db.SetClock(func() time.Time { return now })
		post(false, 5) // recent test data
		p := retention.Purger{DB: db, Tables: []retention.Table{{Name: "events"}}}
		res, err := p.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows["events"] != 1 || res.LedgerTransactions != 1 {
			t.Fatalf("purged %+v", res)
		}
		var nEvents int
		db.QueryRow(ctx, "SELECT COUNT(*) FROM events").Scan(&nEvents)
		if nEvents != 2 {
			t.Fatalf("%d events left, want the live one and the recent one", nEvents)
		}
		test, _ := ledger.AccountBalance(ctx, db, ledger.AccountRef{MerchantID: "mer_1", Currency: "DJF", Kind: ledger.Available})
		live, _ := ledger.AccountBalance(ctx, db, ledger.AccountRef{MerchantID: "mer_1", Livemode: true, Currency: "DJF", Kind: ledger.Available})
		if test != 105 || live != 70 {
			t.Fatalf("balances changed by the purge: test %d live %d", test, live)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}
