package refunds_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestCrashBetweenRefundCallAndOutcome runs `payd provider-sim` and
// `payd serve` as processes and kills payd with SIGKILL once the simulator
// has taken a live refund and before payd has its answer (the simulator
// acts, then holds the answer; it sends no callbacks). After the restart,
// reconciliation asks the simulator and the refund settles exactly once: one
// refund at the provider under its reference, one refund row, one
// refund.succeeded, one refund and one refund_settlement posting, nothing
// left reserved, and the ledger verifies. The client's retry under its
// Idempotency-Key creates nothing more. Reconciliation runs every 2 s before
// the kill (it would otherwise settle the refund while its call hangs) and
// every 300 ms after the restart.
func TestCrashBetweenRefundCallAndOutcome(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test: skipped with -short")
	}
	bin := testutil.BuildPayd(t)
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			ctx := context.Background()
			dbURL := storetest.URL(t, engine)

			simAddr := testutil.FreeAddr(t)
			simURL := "http://" + simAddr
			provSim := testutil.NewProcess(t, bin)
			provSim.Start(simURL+"/_sim/healthz", "provider-sim", "--addr", simAddr, "--push-delay", "50ms",
				"--drop-callbacks", "--timeout-rate", "1")

			p := testutil.NewServer(t, bin, "PAYD_DATABASE_URL="+dbURL,
				"PAYD_RECONCILE_INTERVAL=2s", "PAYD_RATE_LIMIT=0", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=",
				"PAYD_SECRETS_KEY="+strings.Repeat("6b", 32))
			url := p.URL
			p.Env = append(p.Env, "PAYD_PUBLIC_URL="+url)
			var m struct {
				MerchantID string `json:"merchant_id"`
			}
			if err := json.Unmarshal(p.Run("merchant", "create", "--name", "Refund crash test", "--json"), &m); err != nil || m.MerchantID == "" {
				t.Fatalf("merchant create: %v", err)
			}
			const apiKey = "sk_sim_wallet_c_refund_crash"
			conn := filepath.Join(t.TempDir(), "wallet_c.json")
			cfg, _ := json.Marshal(map[string]string{"base_url": simURL + "/wallet_c", "api_key": apiKey,
				"callback_secret": "cbsec_refund_crash_0123456789", "timeout": "3s"})
			if err := os.WriteFile(conn, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			p.Run("provider", "connect", "--merchant", m.MerchantID, "--provider", "wallet_c", "--config", conn)
			p.Run("merchant", "kyc", "--merchant", m.MerchantID, "--status", "approved")
			var k struct {
				Secret string `json:"secret"`
			}
			if err := json.Unmarshal(p.Run("key", "create", "--merchant", m.MerchantID, "--mode", "live", "--json"), &k); err != nil || k.Secret == "" {
				t.Fatalf("live key: %v", err)
			}
			p.Serve()
			call := func(method, path string, body any, headers map[string]string) (int, []byte) {
				return testutil.Call(t, method, url+path, k.Secret, body, headers)
			}

			// A live payment; the simulator holds every answer, so payd learns
			// the outcome by asking (reconciliation of pending intents).
			st, body := call("POST", "/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "wallet_c",
				"customer_msisdn": "+25377123123"}, map[string]string{"Idempotency-Key": "crash-pay"})
			var pi struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			}
			if json.Unmarshal(body, &pi); pi.ID == "" {
				t.Fatalf("payment: %d %s", st, body)
			}
			waitFor(t, p, "payment succeeded", func() bool {
				_, body := call("GET", "/v1/payment_intents/"+pi.ID, nil, nil)
				json.Unmarshal(body, &pi)
				return pi.Status == "succeeded"
			})

			db, err := store.Open(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			// The refund: its request hangs at the provider, which has
			// refunded. Kill payd as soon as the simulator holds it.
			answered := make(chan struct{})
			go func() {
				testutil.CallQuiet(url+"/v1/refunds", k.Secret, map[string]any{"payment_intent": pi.ID, "amount_minor": 400},
					map[string]string{"Idempotency-Key": "crash-refund"})
				close(answered)
			}()
			var refundID string
			waitFor(t, p, "the refund at the provider", func() bool {
				if refundID == "" {
					err := db.QueryRow(ctx, "SELECT id FROM refunds WHERE payment_intent = ?", pi.ID).Scan(&refundID)
					if err != nil && !store.IsNotFound(err) && err != sql.ErrNoRows {
						t.Fatal(err)
					}
					if refundID == "" {
						return false
					}
				}
				st, _ := testutil.Call(t, "GET", simURL+"/wallet_c/v1/refunds?reference="+refundID, apiKey, nil, nil)
				return st == 200
			})
			// Still inside the call: no answer to the client, and payd has not
			// given up on the provider (it logs that before recording).
			select {
			case <-answered:
				t.Fatalf("payd answered the refund request before the kill; log:\n%s", p.Tail())
			default:
			}
			if log := p.Tail(); strings.Contains(log, "refund sent without an answer") {
				t.Fatalf("the refund call had timed out when the refund became visible: it was not committed before the call; log:\n%s", log)
			}
			p.Kill()
			if got := refundStatus(t, db, refundID); got != "pending" {
				t.Fatalf("the refund was %s when payd was killed: the kill missed the window between the call and its outcome", got)
			}
			if got := dbBalance(t, db, m.MerchantID, ledger.Reserved); got != 400 {
				t.Fatalf("reserved %d at the kill, want 400", got)
			}

			// Reconciliation looks for refunds pending longer than its interval:
			// 2 s kept it away from the refund until the kill; now often.
			p.Env = append(p.Env, "PAYD_RECONCILE_INTERVAL=300ms")
			// The killed process held its periodic jobs' leases (2 minutes);
			// let them run out now rather than wait.
			if _, err := db.Exec(ctx, "UPDATE jobs SET locked_until = 0 WHERE status = 'running'"); err != nil {
				t.Fatal(err)
			}
			p.Serve()
			waitFor(t, p, "the refund settled", func() bool { return refundStatus(t, db, refundID) == "succeeded" })
			// The client retries its request: the same refund or "still in
			// use" (the crashed run's lease), never a second refund.
			st, body = call("POST", "/v1/refunds", map[string]any{"payment_intent": pi.ID, "amount_minor": 400},
				map[string]string{"Idempotency-Key": "crash-refund"})
			if st != 201 && st != 409 || st == 201 && !strings.Contains(string(body), refundID) {
				t.Fatalf("retry: %d %s", st, body)
			}
			time.Sleep(time.Second) // reconciliation runs again and finds nothing to do
			p.Kill()

			counts := []struct {
				what string
				q    string
				want int
			}{
				{"refunds of the intent", "SELECT COUNT(*) FROM refunds WHERE payment_intent = ?", 1},
				{"refund.created", "SELECT COUNT(*) FROM events WHERE type = 'refund.created' AND object_id IN (SELECT id FROM refunds WHERE payment_intent = ?)", 1},
				{"refund.succeeded", "SELECT COUNT(*) FROM events WHERE type = 'refund.succeeded' AND object_id IN (SELECT id FROM refunds WHERE payment_intent = ?)", 1},
				{"refund.failed", "SELECT COUNT(*) FROM events WHERE type = 'refund.failed' AND object_id IN (SELECT id FROM refunds WHERE payment_intent = ?)", 0},
				{"refund postings", "SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'refund' AND reference IN (SELECT id FROM refunds WHERE payment_intent = ?)", 1},
				{"refund_settlement postings", "SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'refund_settlement' AND reference IN (SELECT id FROM refunds WHERE payment_intent = ?)", 1},
			}
			for _, c := range counts {
				var n int
				if err := db.QueryRow(ctx, c.q, pi.ID).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != c.want {
					t.Errorf("%s: %d, want %d", c.what, n, c.want)
				}
			}
			if got := dbBalance(t, db, m.MerchantID, ledger.Reserved); got != 0 {
				t.Errorf("reserved %d after the refund settled", got)
			}
			if got := dbBalance(t, db, m.MerchantID, ledger.Available); got != 600 {
				t.Errorf("available %d, want 600", got)
			}
			// The provider holds one refund under the reference, of 400: a
			// second would have been refused (duplicate_reference) or would
			// have left less to refund of the payment than 600.
			if st, body := testutil.Call(t, "GET", simURL+"/wallet_c/v1/refunds?reference="+refundID, apiKey, nil, nil); st != 200 ||
				!strings.Contains(string(body), `"amount_minor":400`) || !strings.Contains(string(body), `"succeeded"`) {
				t.Errorf("the provider's refund: %d %s", st, body)
			}
			if err := ledger.Verify(ctx, db); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func refundStatus(t *testing.T, db *store.DB, id string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(context.Background(), "SELECT status FROM refunds WHERE id = ?", id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func dbBalance(t *testing.T, db *store.DB, merchantID string, kind ledger.AccountKind) int64 {
	t.Helper()
	b, err := ledger.AccountBalance(context.Background(), db, ledger.AccountRef{MerchantID: merchantID, Livemode: true, Currency: "DJF", Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitFor polls cond for up to 60 s.
func waitFor(t *testing.T, p *testutil.Process, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited too long for %s; payd's log:\n%s", what, p.Tail())
		}
	}
}
