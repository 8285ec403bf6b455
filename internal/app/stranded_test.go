package app_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestPayoutStrandedByALostDatabase (PostgreSQL): a live payout committed
// its recovery point and sent the money; while the rail's answer is on its
// way the database goes away (every connection cut, new ones refused: the
// primary lost). The request answers 503 database_unavailable with
// Retry-After, never 500. Once the database is back, a retry with the same
// key gets its answer within seconds (the failed release of its key is made
// when the database returns, and a claim's lease is short and renewed while
// its request runs), not after minutes of 409 idempotency_key_in_use. The
// money moved once.
func TestPayoutStrandedByALostDatabase(t *testing.T) {
	t.Parallel()
	list := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	u, err := url.Parse(storetest.MigratedURL(t, storetest.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testutil.StartDBProxy(t, u.Host)
	u.Host = proxy.Addr()
	e := apptest.Start(t, storetest.Postgres, func(c *app.Config) { c.DatabaseURL, c.SanctionsList = u.String(), list })
	h := &heldProvider{sim: sim.New(sim.Config{PushDelay: 100 * time.Millisecond}), path: "/wallet_b/v1/payouts",
		acted: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(h)
	released := false
	defer func() {
		if !released {
			close(h.release)
		}
		srv.Close()
		h.sim.Close()
	}()
	h.sim.SetPublicURL(srv.URL)
	live := e.GoLive(&apptest.Sim{Server: &sim.Server{Sim: h.sim, URL: srv.URL}, T: t}, apptest.LiveConnection{Timeout: "2s"}, "wallet_c", "wallet_b")
	fundLive(t, e, live, 50_000)

	create := apptest.Request{Method: "POST", Path: "/v1/payouts", Key: live, Headers: map[string]string{"Idempotency-Key": "stranded-1"},
		Body: map[string]any{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377300001", "recipient_name": "Amina Hassan"}}
	first := make(chan *apptest.Response, 1)
	go func() { first <- e.Do(create) }()
	select {
	case <-h.acted:
	case <-time.After(30 * time.Second):
		t.Fatal("the rail was never called")
	}
	// The primary is lost while the rail's answer is on its way.
	proxy.Down()
	close(h.release)
	released = true
	var r *apptest.Response
	select {
	case r = <-first:
	case <-time.After(60 * time.Second):
		t.Fatal("the stranded request never answered")
	}
	if r.Status != 503 || r.ErrorCode() != "database_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("the stranded request answered %d %s (Retry-After %q); want 503 database_unavailable with Retry-After",
			r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	time.Sleep(700 * time.Millisecond)
	proxy.Up()
	back := time.Now()
	var answered *apptest.Response
	conflicts := 0
	for deadline := back.Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r := e.Do(create)
		if r.Status == 201 {
			answered = r
			break
		}
		if r.Status == 409 && r.ErrorCode() == "idempotency_key_in_use" || r.Status == 503 {
			conflicts++
			continue
		}
		t.Fatalf("retry after the database came back: %d %s", r.Status, r.Body)
	}
	if answered == nil {
		t.Fatalf("no answer within 8 s of the database's return (%d retries refused)", conflicts)
	}
	t.Logf("answered %s after the database came back (%d retries refused first)", time.Since(back).Round(time.Millisecond), conflicts)
	ref, _ := answered.Map(t)["id"].(string)
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if s := e.Do(apptest.Request{Method: "GET", Path: "/v1/payouts/" + ref, Key: live}).Map(t)["status"]; s == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the payout was never recorded as paid")
		}
	}
	h.mu.Lock()
	paid := h.created
	h.mu.Unlock()
	ctx := context.Background()
	if n := storetest.Count(t, e.Main.DB, "SELECT COUNT(*) FROM payouts"); n != 1 || paid != 1 {
		t.Fatalf("%d payouts, %d paid at the rail; want 1 each", n, paid)
	}
	if n := storetest.Count(t, e.Main.DB, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ? AND kind = 'payout_paid'", ref); n != 1 {
		t.Fatalf("%d paid postings", n)
	}
	if err := ledger.Verify(ctx, e.Main.DB); err != nil {
		t.Fatal(err)
	}
}
