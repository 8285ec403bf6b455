package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// callProc sends a request to the `payd serve` p, decodes a JSON answer into
// out (when not nil), logs an answer that is not 2xx and returns the status.
func callProc(t *testing.T, p *testutil.Process, method, path, key string, body, out any) int {
	t.Helper()
	status, b := testutil.Call(t, method, p.URL+path, key, body, nil)
	if out != nil {
		json.Unmarshal(b, out)
	}
	if status/100 != 2 {
		t.Logf("%s %s: %d %.300s", method, path, status, b)
	}
	return status
}

// TestProcessesCrashDuringAdvance: three `payd serve` processes on one
// PostgreSQL database advance a test clock with N monthly subscriptions
// through 12 periods, the advances split between their job runners. In the
// middle of the fourth advance all three are killed with SIGKILL; the
// leases the dead processes held (their advance jobs, their claimed
// payment attempts, two minutes each) are moved into the past, standing in
// for the wait, and the three are started again. The advance finishes and
// the year goes on: exactly 12 N invoices, each paid once by one succeeded
// payment intent with one invoice.paid and one ledger credit. N is
// runnerSubs: 1,000, or 40 with -short or -race.
func TestProcessesCrashDuringAdvance(t *testing.T) {
	n := runnerSubs()
	dbURL := storetest.URL(t, storetest.Postgres)
	bin := testutil.BuildPayd(t)
	base := []string{"PAYD_DATABASE_URL=" + dbURL, "PAYD_RATE_LIMIT=0", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=",
		"PAYD_SECRETS_KEY=" + strings.Repeat("5a", 32)}
	var created struct {
		MerchantID string   `json:"merchant_id"`
		SecretKeys []string `json:"secret_keys"`
	}
	out := testutil.NewProcess(t, bin, base...).Run("merchant", "create", "--name", "Fibre Djibouti", "--json")
	if err := json.Unmarshal(out, &created); err != nil || len(created.SecretKeys) == 0 {
		t.Fatalf("merchant create: %v %s", err, out)
	}
	key := created.SecretKeys[0]
	procs := make([]*testutil.Process, 3)
	for i := range procs {
		procs[i] = testutil.NewServer(t, bin, base...)
		procs[i].Serve()
	}

	start := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	var clk TestClock
	if st := callProc(t, procs[0], "POST", "/v1/test_helpers/test_clocks", key, map[string]any{"frozen_time": start.Unix()}, &clk); st != 201 {
		t.Fatalf("clock: %d", st)
	}
	// The subscriptions, created through all three processes at once.
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p := procs[i%3]
			var c Customer
			if st := callProc(t, p, "POST", "/v1/customers", key, map[string]any{"name": fmt.Sprintf("Customer %d", i), "test_clock": clk.ID,
				"default_payment": map[string]any{"provider": "wallet_c", "customer_msisdn": goodWallet}}, &c); st != 201 {
				errs <- fmt.Errorf("customer %d: %d", i, st)
				return
			}
			if st := callProc(t, p, "POST", "/v1/subscriptions", key, map[string]any{"customer": c.ID, "currency": "DJF", "interval": "month",
				"items": []map[string]any{{"description": "Fibre 100", "amount_minor": 1000}}}, nil); st != 201 {
				errs <- fmt.Errorf("subscription %d: %d", i, st)
			}
		}(i)
		if i%16 == 15 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var k int
		if err := db.QueryRow(context.Background(), q, args...).Scan(&k); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return k
	}
	waitReady := func(limit time.Duration) {
		t.Helper()
		for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
			var c TestClock
			callProc(t, procs[0], "GET", "/v1/test_helpers/test_clocks/"+clk.ID, key, nil, &c)
			if c.Status == ClockReady {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the advance did not finish in %s: %d invoices, %d paid", limit, count("SELECT COUNT(*) FROM invoices"),
					count("SELECT COUNT(*) FROM invoices WHERE status = 'paid'"))
			}
		}
	}

	began := time.Now()
	const crashAt = 3
	for m := range 12 {
		to := PeriodStart(start, Month, 1, m)
		if st := callProc(t, procs[m%3], "POST", "/v1/test_helpers/test_clocks/"+clk.ID+"/advance", key, map[string]any{"frozen_time": to.Unix()}, nil); st != 200 {
			t.Fatalf("advance %d: %d", m, st)
		}
		if m != crashAt {
			waitReady(10 * time.Minute)
			continue
		}
		// Kill all three once the advance is under way, not done.
		before := n * crashAt
		for deadline := time.Now().Add(2 * time.Minute); count("SELECT COUNT(*) FROM invoices WHERE status = 'paid'") <= before; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the fourth advance made no progress")
			}
		}
		for _, p := range procs {
			p.Kill()
		}
		paid := count("SELECT COUNT(*) FROM invoices WHERE status = 'paid'")
		t.Logf("killed the three processes with %d of %d invoices paid", paid, n*(crashAt+1))
		if paid >= n*(crashAt+1) {
			t.Logf("the advance had finished before the kill landed")
		}
		// Nobody is alive: the leases they held are moved into the past, as
		// two minutes of waiting would.
		past := store.Micros(time.Now().Add(-time.Second))
		if _, err := db.Exec(context.Background(), "UPDATE jobs SET locked_until = ? WHERE status = 'running'", past); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(context.Background(), "UPDATE invoices SET attempt_claimed_until = ? WHERE attempt_claimed_until IS NOT NULL", past); err != nil {
			t.Fatal(err)
		}
		for _, p := range procs {
			p.Serve()
		}
		waitReady(10 * time.Minute)
	}
	t.Logf("%d subscriptions through 12 periods, with a crash, in %s", n, time.Since(began).Round(time.Millisecond))
	for _, p := range procs {
		p.Kill()
	}

	checks := []struct {
		what      string
		got, want int
	}{
		{"invoices", count("SELECT COUNT(*) FROM invoices"), 12 * n},
		{"paid invoices", count("SELECT COUNT(*) FROM invoices WHERE status = 'paid' AND amount_paid = 1000"), 12 * n},
		{"invoice.paid events", count("SELECT COUNT(*) FROM events WHERE type = 'invoice.paid'"), 12 * n},
		{"invoices with other than one invoice.paid", count(`SELECT COUNT(*) FROM invoices i WHERE
			(SELECT COUNT(*) FROM events e WHERE e.object_id = i.id AND e.type = 'invoice.paid') <> 1`), 0},
		{"succeeded intents", count("SELECT COUNT(*) FROM payment_intents WHERE status = 'succeeded'"), 12 * n},
		{"payment credits", count("SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'payment_succeeded'"), 12 * n},
		{"periods billed twice", count(`SELECT COUNT(*) FROM (SELECT subscription_id, period_start FROM invoices
			GROUP BY subscription_id, period_start HAVING COUNT(*) > 1) d`), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	available, err := ledger.AccountBalance(context.Background(), db, ledger.AccountRef{MerchantID: created.MerchantID, Currency: "DJF", Kind: ledger.Available})
	if err != nil || available != int64(12*n*1000) {
		t.Errorf("available %d (%v), want %d", available, err, 12*n*1000)
	}
	if err := ledger.Verify(context.Background(), db); err != nil {
		t.Fatal(err)
	}
}
