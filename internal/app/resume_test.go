package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/testutil"
)

// heldProvider is the simulator behind a gate: the first initiation is
// carried out by the simulator, but its answer is held until release (the
// payd process that asked never hears it, as when it dies right after the
// call). It counts the payments created and the answers replayed.
type heldProvider struct {
	sim      *sim.Sim
	path     string // the call whose first answer is held
	acted    chan struct{}
	release  chan struct{}
	mu       sync.Mutex
	initiate int
	created  int
	replayed int
}

func (h *heldProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != "POST" || r.URL.Path != h.path {
		h.sim.Handler().ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	h.sim.Handler().ServeHTTP(rec, r)
	h.mu.Lock()
	h.initiate++
	first := h.initiate == 1
	if rec.Header().Get(protocol.HeaderReplayed) == "true" {
		h.replayed++
	} else if rec.Code == http.StatusCreated {
		h.created++
	}
	h.mu.Unlock()
	if first {
		close(h.acted)
		<-h.release
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// TestResumeAfterProviderCall: a live payment intent's create commits its
// recovery point and calls the provider, which creates the payment; the
// process that asked never hears the answer (it is held, as if that process
// had died). While its lease runs a retry on another process is refused
// with 409; once the lease has run out, the retry resumes at the recovery
// point: the same intent, asked of the provider again under the same
// provider key, which replays its answer instead of charging again. The
// intent settles once.
func TestResumeAfterProviderCall(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		// The customer approves (the provider's push) 5 s after the payment
		// is created: well after the retry below has asked the provider again
		// (with 200 ms, a slow run under the race detector saw the push settle
		// the intent before the retry, which then had nothing to ask).
		h := &heldProvider{sim: sim.New(sim.Config{PushDelay: 5 * time.Second}), path: "/wallet_c/v1/payments",
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
		live := e.GoLive(&apptest.Sim{Server: &sim.Server{Sim: h.sim, URL: srv.URL}, T: t}, apptest.LiveConnection{Timeout: "30s"}, "wallet_c")
		// A second payd process on the same database takes the retries;
		// both are reached at one public URL (the provider's callbacks go
		// there), as behind a load balancer.
		other := apptest.Start(t, e.Engine, func(c *app.Config) {
			c.DatabaseURL, c.PublicURL = e.Main.Config.DatabaseURL, e.Main.Config.PublicURL
		})

		create := apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: live, Headers: map[string]string{"Idempotency-Key": "resume-1"},
			Body: map[string]any{"amount": 700, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377123123"}}
		firstRun := make(chan *apptest.Response, 1)
		go func() { firstRun <- e.Do(create) }()
		select {
		case <-h.acted:
		case <-time.After(30 * time.Second):
			t.Fatal("the provider was never called")
		}
		ctx := context.Background()
		db := e.Main.DB
		var state, point, ref string
		if err := db.QueryRow(ctx, "SELECT state, recovery_point, recovery_ref FROM idempotency_keys WHERE idem_key = 'resume-1'").
			Scan(&state, &point, &ref); err != nil {
			t.Fatal(err)
		}
		if state != "in_flight" || point != "payment_intent.initiate" || ref == "" {
			t.Fatalf("key after the provider call: %s %s %s", state, point, ref)
		}
		if r := other.Do(create); r.Status != 409 || r.ErrorCode() != "idempotency_key_in_use" {
			t.Fatalf("retry while the first run holds its lease: %d %s", r.Status, r.Body)
		}
		// The first run's process is gone and its lease has run out.
		if _, err := db.Exec(ctx, "UPDATE idempotency_keys SET locked_until = ? WHERE idem_key = 'resume-1'", store.Micros(db.Now().Add(-time.Second))); err != nil {
			t.Fatal(err)
		}
		r := other.Do(create)
		if r.Status != 201 {
			t.Fatalf("resumed retry: %d %s\n%s", r.Status, r.Body, other.Logs.String())
		}
		if id := r.Map(t)["id"]; id != ref {
			t.Fatalf("the retry answered intent %v, not the one its first run created (%s)", id, ref)
		}
		h.mu.Lock()
		created, replayed := h.created, h.replayed
		h.mu.Unlock()
		if created != 1 || replayed != 1 {
			t.Fatalf("at the provider: %d payments created, %d answers replayed; want 1 and 1", created, replayed)
		}
		if again := other.Do(create); again.Status != 201 || string(again.Body) != string(r.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.Status, again.Body)
		}
		// The first run hears its answer at last: it cannot answer anew.
		close(h.release)
		released = true
		if first := <-firstRun; first.Status == 201 && string(first.Body) != string(r.Body) {
			t.Fatalf("the first run answered a second, different success: %s", first.Body)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if s := other.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + ref, Key: live}).Map(t)["status"]; s == "succeeded" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the intent never succeeded")
			}
		}
		var intents, settled int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM payment_intents WHERE livemode = ?", true).Scan(&intents); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", ref).Scan(&settled); err != nil {
			t.Fatal(err)
		}
		if intents != 1 || settled != 1 {
			t.Fatalf("%d live intents, %d ledger transactions for it; want 1 and 1", intents, settled)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// TestResumeAfterPayoutSent: a live payout's create commits its recovery
// point and sends the payout, which the rail pays; the process that sent it
// never hears the answer. A retry after the lease has run out answers the
// payout as it stands without sending it again; the rail's callback, or a
// dispatcher asking the rail once the claim's own lease has run out, records
// it paid: one payout at the rail, paid once in the ledger.
func TestResumeAfterPayoutSent(t *testing.T) {
	t.Parallel()
	list := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		h := &heldProvider{sim: sim.New(sim.Config{PushDelay: 100 * time.Millisecond}), path: "/wallet_b/v1/payouts",
			acted: make(chan struct{}), release: make(chan struct{})}
		srv := httptest.NewServer(h)
		defer func() {
			close(h.release)
			srv.Close()
			h.sim.Close()
		}()
		h.sim.SetPublicURL(srv.URL)
		live := e.GoLive(&apptest.Sim{Server: &sim.Server{Sim: h.sim, URL: srv.URL}, T: t}, apptest.LiveConnection{Timeout: "2s"}, "wallet_c", "wallet_b")
		other := apptest.Start(t, e.Engine, func(c *app.Config) {
			c.DatabaseURL, c.PublicURL, c.SanctionsList = e.Main.Config.DatabaseURL, e.Main.Config.PublicURL, list
		})
		fundLive(t, e, live, 50_000)

		create := apptest.Request{Method: "POST", Path: "/v1/payouts", Key: live, Headers: map[string]string{"Idempotency-Key": "payout-1"},
			Body: map[string]any{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377300001", "recipient_name": "Amina Hassan"}}
		go e.Do(create)
		select {
		case <-h.acted:
		case <-time.After(30 * time.Second):
			t.Fatal("the rail was never called")
		}
		ctx := context.Background()
		db := e.Main.DB
		var state, point, ref string
		if err := db.QueryRow(ctx, "SELECT state, recovery_point, recovery_ref FROM idempotency_keys WHERE idem_key = 'payout-1'").
			Scan(&state, &point, &ref); err != nil {
			t.Fatal(err)
		}
		if state != "in_flight" || point != "payout.dispatch" || ref == "" {
			t.Fatalf("key after the rail call: %s %s %s", state, point, ref)
		}
		if r := other.Do(create); r.Status != 409 {
			t.Fatalf("retry while the first run holds its lease: %d %s", r.Status, r.Body)
		}
		if _, err := db.Exec(ctx, "UPDATE idempotency_keys SET locked_until = ? WHERE idem_key = 'payout-1'", store.Micros(db.Now().Add(-time.Second))); err != nil {
			t.Fatal(err)
		}
		r := other.Do(create)
		// As it stands: processing, or paid already if the rail's callback
		// came first.
		if st := r.Map(t)["status"]; r.Status != 201 || r.Map(t)["id"] != ref || st != "processing" && st != "succeeded" {
			t.Fatalf("resumed retry: %d %s", r.Status, r.Body)
		}
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if s := other.Do(apptest.Request{Method: "GET", Path: "/v1/payouts/" + ref, Key: live}).Map(t)["status"]; s == "succeeded" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the payout was never recorded as paid")
			}
		}
		h.mu.Lock()
		sent, paid := h.initiate, h.created
		h.mu.Unlock()
		var payouts, postings int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM payouts").Scan(&payouts); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ? AND kind = 'payout_paid'", ref).Scan(&postings); err != nil {
			t.Fatal(err)
		}
		if sent != 1 || paid != 1 || payouts != 1 || postings != 1 {
			t.Fatalf("payout sent %d times, %d paid at the rail, %d payouts, %d paid postings; want 1 each", sent, paid, payouts, postings)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	}, func(c *app.Config) { c.SanctionsList = list })
}

// TestReconcileLeavesHeldIntent: a live create commits its recovery point
// and dies before the provider ever hears of the payment. Reconciliation,
// asking the provider, learns it has no record; while the request's key
// still holds the intent (its lease, then the grace a retrying client is
// given) the intent stays processing for the retry to send. Once the grace
// has passed, the intent is canceled as never taken, and a late retry
// answers that without calling the provider.
func TestReconcileLeavesHeldIntent(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		var mu sync.Mutex
		initiations := 0
		hold, held := make(chan struct{}), make(chan struct{})
		first := true
		simulator := sim.New(sim.Config{PushDelay: time.Hour, Before: func(provider, op string) {
			if op != "initiate" {
				return
			}
			mu.Lock()
			initiations++
			wait := first
			first = false
			mu.Unlock()
			if wait {
				// The process dies here, before the provider acts: this
				// call never returns to it (nor acts at the provider).
				close(held)
				<-hold
			}
		}})
		srv := httptest.NewServer(simulator.Handler())
		defer func() {
			close(hold)
			srv.Close()
			simulator.Close()
		}()
		simulator.SetPublicURL(srv.URL)
		live := e.GoLive(&apptest.Sim{Server: &sim.Server{Sim: simulator, URL: srv.URL}, T: t}, apptest.LiveConnection{Timeout: "30s"}, "wallet_c")
		create := apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: live, Headers: map[string]string{"Idempotency-Key": "never-sent"},
			Body: map[string]any{"amount": 900, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377123123"}}
		go e.Do(create)
		select {
		case <-held:
		case <-time.After(30 * time.Second):
			t.Fatal("the provider was never called")
		}
		ctx := context.Background()
		db := e.Main.DB
		var ref string
		if err := db.QueryRow(ctx, "SELECT recovery_ref FROM idempotency_keys WHERE idem_key = 'never-sent'").Scan(&ref); err != nil {
			t.Fatal(err)
		}
		reconcile := func() string {
			t.Helper()
			st, err := e.Main.PaymentIntents().ReconcileIntent(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			return string(st)
		}
		if st := reconcile(); st != "processing" {
			t.Fatalf("reconciled while the request holds its key: %s", st)
		}
		// The request's process died and its lease ran out a minute ago:
		// within the grace, the intent is still the retry's to send.
		setLease := func(ago time.Duration) {
			t.Helper()
			if _, err := db.Exec(ctx, "UPDATE idempotency_keys SET locked_until = ? WHERE idem_key = 'never-sent'", store.Micros(db.Now().Add(-ago))); err != nil {
				t.Fatal(err)
			}
		}
		setLease(time.Minute)
		if st := reconcile(); st != "processing" {
			t.Fatalf("reconciled within the grace: %s", st)
		}
		setLease(idempotency.ResumeGrace + time.Minute)
		if st := reconcile(); st != "canceled" {
			t.Fatalf("reconciled after the grace: %s", st)
		}
		mu.Lock()
		before := initiations
		mu.Unlock()
		other := apptest.Start(t, e.Engine, func(c *app.Config) {
			c.DatabaseURL, c.PublicURL = e.Main.Config.DatabaseURL, e.Main.Config.PublicURL
		})
		r := other.Do(create)
		if r.Map(t)["id"] != ref || r.Map(t)["status"] != "canceled" {
			t.Fatalf("late retry: %d %s", r.Status, r.Body)
		}
		mu.Lock()
		after := initiations
		mu.Unlock()
		if after != before {
			t.Fatalf("the late retry called the provider for a canceled intent")
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// fundLive funds the live balance with a push payment of amount (wallet_c)
// and waits for its success.
func fundLive(t *testing.T, e *apptest.Env, live string, amount int64) {
	t.Helper()
	in := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: live, Headers: map[string]string{"Idempotency-Key": "fund"},
		Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377123123"}})
	fundID, _ := in.Map(t)["id"].(string)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + fundID, Key: live}).Map(t)["status"]; s == "succeeded" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("funding intent %s never succeeded", fundID)
		}
	}
}
