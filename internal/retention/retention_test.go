package retention_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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

// TestPurgeByMerchant: payment intents are purged merchant by merchant
// through the (merchant_id, livemode, created_at) index: every merchant's
// old test-mode intents go, live and recent ones stay.
func TestPurgeByMerchant(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		old := store.Micros(now.Add(-40 * 24 * time.Hour))
		recent := store.Micros(now.Add(-time.Hour))
		n := 0
		intent := func(merchant string, live bool, created int64) {
			n++
			if _, err := db.Exec(ctx, `INSERT INTO payment_intents (id, merchant_id, livemode, status, amount_minor, currency,
				provider, flow, created_at, updated_at) VALUES (?, ?, ?, 'processing', 100, 'DJF', 'sandbox', 'redirect', ?, ?)`,
				fmt.Sprintf("pi_%d", n), merchant, live, created, created); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []string{"mer_a", "mer_b"} {
			if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", m, m, old); err != nil {
				t.Fatal(err)
			}
			intent(m, false, old)
			intent(m, false, old)
			intent(m, true, old)
			intent(m, false, recent)
		}
		var merchants int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM merchants").Scan(&merchants); err != nil {
			t.Fatal(err)
		}
		var commits atomic.Int64
		db.OnCommit(func(context.Context) { commits.Add(1) })
		defer db.OnCommit(nil)
		p := retention.Purger{DB: db, Tables: []retention.Table{{Name: "payment_intents", ByMerchant: true}}}
		res, err := p.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// One DELETE of its own per merchant, then the ledger's compaction:
		// a purge of the whole table at once would commit once for it.
		if got, want := commits.Load(), int64(merchants+1); got != want {
			t.Fatalf("the purge committed %d times, want %d: one per merchant (%d) and one after", got, want, merchants)
		}
		if res.Rows["payment_intents"] != 4 {
			t.Fatalf("purged %d intents, want the 4 old test-mode ones", res.Rows["payment_intents"])
		}
		var left, leftOld int
		db.QueryRow(ctx, "SELECT COUNT(*), COALESCE(SUM(CASE WHEN livemode = ? AND created_at = ? THEN 1 ELSE 0 END), 0) FROM payment_intents",
			false, old).Scan(&left, &leftOld)
		if left != 4 || leftOld != 0 {
			t.Fatalf("%d intents left (%d old test-mode ones), want 4 (each merchant's live and recent one)", left, leftOld)
		}
		// On both engines (PostgreSQL with sequential scans discouraged,
		// since on so few rows it would rather read the table).
		plan := storetest.QueryPlan(t, db, "DELETE FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND created_at < ?", "mer_a", false, old)
		if !strings.Contains(plan, "portal_payment_intents_created") {
			t.Fatalf("the purge's DELETE does not read through (merchant_id, livemode, created_at):\n%s", plan)
		}
	})
}
