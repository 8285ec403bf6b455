package payouts_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestCrashDuringFanOut kills payd with SIGKILL in the middle of a
// 10,000-row fan-out and restarts it: every row ends once, nothing is paid
// twice, the counters and the outbox are exact.
func TestCrashDuringFanOut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test: skipped with -short")
	}
	bin := testutil.BuildPayd(t)
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			dbURL := storetest.URL(t, engine)
			p := testutil.NewServer(t, bin, "PAYD_DATABASE_URL="+dbURL, "PAYD_SANDBOX_TIMEOUT_DELAY=50ms",
				"PAYD_RATE_LIMIT=0", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=", "PAYD_SECRETS_KEY="+strings.Repeat("5a", 32))
			url := p.URL
			call := func(method, path, key string, body any, headers map[string]string) (int, []byte) {
				return testutil.Call(t, method, url+path, key, body, headers)
			}
			var m struct {
				MerchantID string   `json:"merchant_id"`
				SecretKeys []string `json:"secret_keys"`
			}
			if err := json.Unmarshal(p.Run("merchant", "create", "--name", "Crash test", "--json"), &m); err != nil || len(m.SecretKeys) != 2 {
				t.Fatalf("merchant create: %v", err)
			}
			p.Serve()
			// payd runs without the race detector here, and fast: under -race
			// (1,000 rows elsewhere) keep enough rows that the kill lands
			// mid fan-out.
			n := max(scaleRows(), 5_000)
			rows, succeeded, failed, paid := bigRows(n)
			if st, body := call("POST", "/v1/sandbox/topups", m.SecretKeys[0], map[string]any{"currency": "DJF", "amount_minor": 5_000_000}, nil); st != 201 {
				t.Fatalf("topup %d %s", st, body)
			}
			st, body := call("POST", "/v1/payouts/bulk", m.SecretKeys[0], map[string]any{"currency": "DJF", "rows": rows},
				map[string]string{"Idempotency-Key": "crash-batch"})
			if st != 201 {
				t.Fatalf("create %d %.300s", st, body)
			}
			var b batch
			json.Unmarshal(body, &b)
			if st, body := call("POST", "/v1/payouts/bulk/"+b.ID+"/approve", m.SecretKeys[1], nil, nil); st != 200 {
				t.Fatalf("approve %d %s", st, body)
			}
			// Kill once a fifth of the rows are done: the fan-out is well under
			// way, with chunks claimed and in flight.
			deadline := time.Now().Add(60 * time.Second)
			for {
				_, body := call("GET", "/v1/payouts/bulk/"+b.ID, m.SecretKeys[0], nil, nil)
				json.Unmarshal(body, &b)
				if *b.RowsSucceeded+*b.RowsFailed >= n/5 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no row finished; log:\n%s", p.Tail())
				}
				time.Sleep(5 * time.Millisecond)
			}
			p.Kill()
			done := *b.RowsSucceeded + *b.RowsFailed
			if done >= n {
				t.Fatalf("the fan-out finished before the kill (%d rows)", done)
			}
			t.Logf("killed with %d of %d rows seen done", done, n)

			p.Serve()
			start := time.Now()
			for b.Status != "completed" {
				if time.Since(start) > 90*time.Second {
					t.Fatalf("batch not completed after restart: %+v; log:\n%s", b, p.Tail())
				}
				time.Sleep(50 * time.Millisecond)
				_, body := call("GET", "/v1/payouts/bulk/"+b.ID, m.SecretKeys[0], nil, nil)
				json.Unmarshal(body, &b)
			}
			t.Logf("completed %v after the restart", time.Since(start).Round(time.Millisecond))
			p.Kill()
			if *b.RowsSucceeded != succeeded || *b.RowsFailed != failed || *b.RowsPending != 0 {
				t.Fatalf("counters %+v, want %d succeeded %d failed", b, succeeded, failed)
			}
			db, err := store.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			checkBooks(t, db, b.ID, n, succeeded, failed)
			available, _ := ledger.AccountBalance(context.Background(), db, ledger.AccountRef{MerchantID: m.MerchantID, Currency: "DJF", Kind: ledger.Available})
			reserved, _ := ledger.AccountBalance(context.Background(), db, ledger.AccountRef{MerchantID: m.MerchantID, Currency: "DJF", Kind: ledger.Reserved})
			if reserved != 0 || available != 5_000_000-paid {
				t.Fatalf("available %d reserved %d, want %d and 0", available, reserved, 5_000_000-paid)
			}
		})
	}
}

// checkBooks is checkBatchBooks over a bare database.
func checkBooks(t *testing.T, db *store.DB, batchID string, rows, succeeded, failed int) {
	t.Helper()
	ctx := context.Background()
	count := func(q string, args ...any) int {
		var n int
		if err := db.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	checks := []struct {
		what string
		got  int
		want int
	}{
		{"payouts", count("SELECT COUNT(*) FROM payouts WHERE batch_id = ?", batchID), rows},
		{"payouts not terminal", count("SELECT COUNT(*) FROM payouts WHERE batch_id = ? AND status NOT IN ('succeeded','failed')", batchID), 0},
		{"payouts without exactly one posting", count(`SELECT COUNT(*) FROM payouts p WHERE batch_id = ? AND
			(SELECT COUNT(*) FROM ledger_transactions l WHERE l.reference = p.id) <> 1`, batchID), 0},
		{"paid postings", count(`SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'payout_paid' AND reference IN
			(SELECT id FROM payouts WHERE batch_id = ?)`, batchID), succeeded},
		{"succeeded payouts", count("SELECT COUNT(*) FROM payouts WHERE batch_id = ? AND status = 'succeeded'", batchID), succeeded},
		{"events recorded twice", count(`SELECT COUNT(*) FROM (SELECT object_id, type FROM events WHERE object_id IN
			(SELECT id FROM payouts WHERE batch_id = ?) GROUP BY object_id, type HAVING COUNT(*) <> 1) d`, batchID), 0},
		{"payout.created", count("SELECT COUNT(*) FROM events WHERE type = 'payout.created' AND object_id IN (SELECT id FROM payouts WHERE batch_id = ?)", batchID), rows},
		{"payout.succeeded", count("SELECT COUNT(*) FROM events WHERE type = 'payout.succeeded' AND object_id IN (SELECT id FROM payouts WHERE batch_id = ?)", batchID), succeeded},
		{"payout.failed", count("SELECT COUNT(*) FROM events WHERE type = 'payout.failed' AND object_id IN (SELECT id FROM payouts WHERE batch_id = ?)", batchID), failed},
		{"payout_batch.completed", count("SELECT COUNT(*) FROM events WHERE type = 'payout_batch.completed' AND object_id = ?", batchID), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if err := ledger.Verify(ctx, db); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}
