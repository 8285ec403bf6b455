package payouts_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/payouts"
)

// bigRows makes n variant B rows; every 20th fails (insufficient_funds on
// wallet_b or a closed bank account), the others succeed.
func bigRows(n int) (rows []map[string]any, succeeded, failed int, paid int64) {
	for i := 1; i <= n; i++ {
		amount := int64(100 + i%50)
		row := map[string]any{"amount": amount, "reference": fmt.Sprintf("row-%05d", i)}
		switch {
		case i%40 == 0:
			row["provider"], row["recipient_msisdn"] = "wallet_b", "+253000000002"
			failed++
		case i%20 == 0:
			row["provider"], row["recipient_account"] = "bank_a", "sandbox_account_closed"
			failed++
		case i%2 == 0:
			row["provider"], row["recipient_account"] = "bank_b", fmt.Sprintf("DJ%08d", i)
			succeeded++
			paid += amount
		default:
			row["provider"], row["recipient_msisdn"] = "wallet_b", fmt.Sprintf("+25377%06d", i)
			succeeded++
			paid += amount
		}
		rows = append(rows, row)
	}
	return rows, succeeded, failed, paid
}

// checkBatchBooks checks a completed batch: one payout and one ledger
// transaction per row, each payout's events once, the float spent or
// released, the book balanced.
func checkBatchBooks(t *testing.T, e *apptest.Env, batchID string, rows, succeeded, failed int) {
	t.Helper()
	if n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE batch_id = ?", batchID); n != rows {
		t.Fatalf("%d payouts, want %d", n, rows)
	}
	if n := countRows(t, e, `SELECT COUNT(*) FROM payouts p WHERE batch_id = ? AND
		(SELECT COUNT(*) FROM ledger_transactions l WHERE l.reference = p.id) <> 1`, batchID); n != 0 {
		t.Fatalf("%d payouts without exactly one ledger transaction", n)
	}
	if n := countRows(t, e, `SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'payout_paid' AND reference IN
		(SELECT id FROM payouts WHERE batch_id = ?)`, batchID); n != succeeded {
		t.Fatalf("%d paid postings, want %d", n, succeeded)
	}
	if n := countRows(t, e, `SELECT COUNT(*) FROM (SELECT object_id, type FROM events WHERE object_id IN
		(SELECT id FROM payouts WHERE batch_id = ?) GROUP BY object_id, type HAVING COUNT(*) <> 1) d`, batchID); n != 0 {
		t.Fatalf("%d payout events recorded more than once", n)
	}
	for typ, want := range map[string]int{"payout.created": rows, "payout.succeeded": succeeded, "payout.failed": failed} {
		if n := countRows(t, e, "SELECT COUNT(*) FROM events WHERE type = ? AND object_id IN (SELECT id FROM payouts WHERE batch_id = ?)", typ, batchID); n != want {
			t.Fatalf("%d %s events, want %d", n, typ, want)
		}
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM events WHERE type = 'payout_batch.completed' AND object_id = ?", batchID); n != 1 {
		t.Fatalf("%d payout_batch.completed events", n)
	}
	verifyLedger(t, e)
}

// scaleRows is the size of the scale and crash tests: 10,000 rows, or
// 1,000 under the race detector (see race_test.go).
func scaleRows() int {
	if payouts.RaceDetector {
		return 1_000
	}
	return 10_000
}

// TestTenThousandRows: a 10,000-row variant B batch goes from approve to
// completed with exact counters and books.
func testTenThousandRows(t *testing.T, e *apptest.Env) {
	if testing.Short() {
		t.Skip("10,000 rows: skipped with -short")
	}
	n := scaleRows()
	rows, succeeded, failed, paid := bigRows(n)
	topup(t, e, "DJF", 5_000_000)
	r := postBulk(e, e.SK, map[string]any{"currency": "DJF", "rows": rows}, "")
	if r.Status != 201 {
		t.Fatalf("create: %d %.300s", r.Status, r.Body)
	}
	var b batch
	r.JSON(t, &b)
	start := time.Now()
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK2}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	approved := time.Since(start)
	b = waitBatch(t, e, b.ID, "to complete", func(b batch) bool { return b.Status == "completed" })
	t.Logf("%s: approve answered in %v, completed %v after approve", e.Engine, approved.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if *b.RowsSucceeded != succeeded || *b.RowsFailed != failed || *b.RowsPending != 0 {
		t.Fatalf("counters %+v", b)
	}
	if bal := balance(t, e, "DJF"); bal.Reserved != 0 || bal.Available != 5_000_000-paid {
		t.Fatalf("balance %+v, want available %d", bal, 5_000_000-paid)
	}
	checkBatchBooks(t, e, b.ID, n, succeeded, failed)
}
