package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store/storetest"
)

// commitCounter counts the database commits made on behalf of each request,
// by the Request-Id the API put in the request's context.
type commitCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func countCommits(t *testing.T, e *apptest.Env) *commitCounter {
	c := &commitCounter{n: map[string]int{}}
	e.Main.DB.OnCommit(func(ctx context.Context) {
		if id := api.RequestIDFrom(ctx); id != "" {
			c.mu.Lock()
			c.n[id]++
			c.mu.Unlock()
		}
	})
	t.Cleanup(func() { e.Main.DB.OnCommit(nil) })
	return c
}

func (c *commitCounter) of(r *apptest.Response) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[r.Header.Get("Request-Id")]
}

// TestOneCommitPerRequest holds the write path to its rule: an idempotent
// API write commits exactly once (the claim of its key, its effect, postings,
// events and the stored answer together), and a replay commits nothing.
func TestOneCommitPerRequest(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		commits := countCommits(t, e)
		want := func(what string, r *apptest.Response, status, n int) {
			t.Helper()
			if r.Status != status {
				t.Fatalf("%s: %d %s", what, r.Status, r.Body)
			}
			if got := commits.of(r); got != n {
				t.Fatalf("%s made %d commits, want %d", what, got, n)
			}
		}
		keyed := func(path, key string, body any) *apptest.Response {
			return e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: body, Headers: map[string]string{"Idempotency-Key": key}})
		}

		create := keyed("/v1/payment_intents", "pi-create", map[string]any{"amount": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		want("payment intent create", create, 201, 1)
		id, _ := create.Map(t)["id"].(string)
		confirm := keyed("/v1/payment_intents/"+id+"/confirm", "pi-confirm", map[string]string{"otp": "123456"})
		want("payment intent confirm", confirm, 200, 1)
		if s := confirm.Map(t)["status"]; s != "succeeded" {
			t.Fatalf("confirmed intent is %v", s)
		}
		want("replayed create", keyed("/v1/payment_intents", "pi-create", map[string]any{"amount": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}), 201, 0)
		want("replayed confirm", keyed("/v1/payment_intents/"+id+"/confirm", "pi-confirm", map[string]string{"otp": "123456"}), 200, 0)

		// A refusal is stored too, in one commit.
		want("bad create", keyed("/v1/payment_intents", "pi-bad", map[string]any{"amount": -1, "currency": "DJF", "provider": "bank_a"}), 400, 1)

		want("sandbox top-up", keyed("/v1/sandbox/topups", "topup", map[string]any{"currency": "DJF", "amount_minor": 50000}), 201, 1)
		want("payout create", keyed("/v1/payouts", "payout", map[string]any{"amount": 700, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377123456"}), 201, 1)

		plain := func(path, _ string, body any) *apptest.Response {
			return e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: body})
		}
		// Without a key each write is its own transaction. On SQLite the
		// group commit may carry it in a batch another writer (a job)
		// commits, which counts there: at most one then.
		atMostOne := func(what string, r *apptest.Response, status, n int) {
			t.Helper()
			if e.Main.DB.Engine().ConcurrentWriters() {
				want(what, r, status, n)
				return
			}
			if r.Status != status {
				t.Fatalf("%s: %d %s", what, r.Status, r.Body)
			}
			if got := commits.of(r); got > n {
				t.Fatalf("%s made %d commits, want at most %d", what, got, n)
			}
		}
		billingWrites(t, e, "keyed", keyed, want, atMostOne)
		billingWrites(t, e, "plain", plain, atMostOne, atMostOne)

		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
		// The request log recorded these requests, outside their commits:
		// the counts above include none of its writes.
		logged := map[string]bool{}
		for _, r := range readRequestLog(t, e, e.SK, "?limit=100").Data {
			logged[r.RequestID] = true
		}
		for _, r := range []*apptest.Response{create, confirm} {
			if !logged[r.Header.Get("Request-Id")] {
				t.Errorf("request %s is not in the request log", r.Header.Get("Request-Id"))
			}
		}
	})
}

// billingWrites makes every billing API write through post (with or
// without an Idempotency-Key) and checks each commits once (a DELETE,
// which takes no key, by wantDelete).
func billingWrites(t *testing.T, e *apptest.Env, tag string, post func(path, key string, body any) *apptest.Response,
	want, wantDelete func(string, *apptest.Response, int, int)) {
	t.Helper()
	id := func(r *apptest.Response) string {
		s, _ := r.Map(t)["id"].(string)
		return s
	}
	cus := post("/v1/customers", tag+"cus-create", map[string]any{"name": "Amina", "phone": "+25377123456",
		"default_payment": map[string]any{"provider": "wallet_c", "customer_msisdn": "+25377123456"}})
	want(tag+" customer create", cus, 201, 1)
	cusID := id(cus)
	want(tag+" customer update", post("/v1/customers/"+cusID, tag+"cus-update", map[string]any{"email": "amina@example.com"}), 200, 1)
	sub := post("/v1/subscriptions", tag+"sub-create", map[string]any{"customer": cusID, "currency": "DJF", "interval": "month",
		"items": []map[string]any{{"description": "Plan", "amount_minor": 1500}}})
	want(tag+" subscription create", sub, 201, 1)
	subID := id(sub)
	want(tag+" subscription update", post("/v1/subscriptions/"+subID, tag+"sub-update", map[string]any{
		"items": []map[string]any{{"description": "Bigger plan", "amount_minor": 2500}}}), 200, 1)
	want(tag+" subscription cancel", post("/v1/subscriptions/"+subID+"/cancel", tag+"sub-cancel", map[string]any{"at_period_end": true}), 200, 1)
	oneOff := func(key string) string {
		inv := post("/v1/invoices", tag+key, map[string]any{"customer": cusID, "currency": "DJF",
			"lines": []map[string]any{{"description": "Setup", "amount_minor": 900}}})
		want(tag+" invoice create", inv, 201, 1)
		want(tag+" invoice finalize", post("/v1/invoices/"+id(inv)+"/finalize", tag+key+"-fin", nil), 200, 1)
		return id(inv)
	}
	want(tag+" invoice void", post("/v1/invoices/"+oneOff("in-1")+"/void", tag+"in-void", nil), 200, 1)
	want(tag+" invoice mark_uncollectible", post("/v1/invoices/"+oneOff("in-2")+"/mark_uncollectible", tag+"in-unc", nil), 200, 1)
	want(tag+" invoice pay", post("/v1/invoices/"+oneOff("in-3")+"/pay", tag+"in-pay", nil), 200, 1)
	clk := post("/v1/test_helpers/test_clocks", tag+"clock-create", map[string]any{"frozen_time": 1767225600})
	want(tag+" test clock create", clk, 201, 1)
	want(tag+" test clock advance", post("/v1/test_helpers/test_clocks/"+id(clk)+"/advance", tag+"clock-advance",
		map[string]any{"frozen_time": 1769904000}), 200, 1)
	// A customer on a test clock paying by an OTP rail, with a trial and
	// with send_invoice.
	clkc := post("/v1/customers", tag+"cus2", map[string]any{"name": "Bilal", "test_clock": id(clk),
		"default_payment": map[string]any{"provider": "bank_a", "customer_msisdn": "+25377123457"}})
	want(tag+" clock customer create", clkc, 201, 1)
	for i, extra := range []map[string]any{{}, {"trial_days": 7}, {"collection_method": "send_invoice", "days_until_due": 5}} {
		body := map[string]any{"customer": id(clkc), "currency": "DJF", "interval": "month",
			"items": []map[string]any{{"description": "Plan", "amount_minor": 1500}}}
		for k, v := range extra {
			body[k] = v
		}
		s := post("/v1/subscriptions", fmt.Sprintf("%ssub2-%d", tag, i), body)
		want(fmt.Sprintf("%s subscription create %v", tag, extra), s, 201, 1)
		want(tag+" subscription cancel now", post("/v1/subscriptions/"+id(s)+"/cancel", fmt.Sprintf("%ssub2c-%d", tag, i), nil), 200, 1)
	}
	inv := post("/v1/invoices", tag+"in-otp", map[string]any{"customer": id(clkc), "currency": "DJF",
		"lines": []map[string]any{{"description": "Setup", "amount_minor": 900}}})
	want(tag+" clock invoice create", inv, 201, 1)
	want(tag+" clock invoice finalize", post("/v1/invoices/"+id(inv)+"/finalize", tag+"in-otp-fin", nil), 200, 1)
	want(tag+" clock invoice pay", post("/v1/invoices/"+id(inv)+"/pay", tag+"in-otp-pay", nil), 200, 1)
	wantDelete(tag+" clock customer delete", e.Do(apptest.Request{Method: "DELETE", Path: "/v1/customers/" + id(clkc), Key: e.SK}), 200, 1)
	wantDelete(tag+" customer delete", e.Do(apptest.Request{Method: "DELETE", Path: "/v1/customers/" + cusID, Key: e.SK}), 200, 1)
}

// TestRoundTripsPerRequest holds PostgreSQL's round trips per request to
// what the write path sends (docs/architecture.md): a keyed create is one
// (BEGIN, the intent, its event, the key's row with the answer and COMMIT
// in one batch: the key is not read first), a confirm three (the intent's
// read; BEGIN, the compare-and-set, the event, the ledger transaction and
// the balance updates; the entries, with the key's row when keyed, and
// COMMIT). The round trips a connection spends preparing a statement it
// has not seen before are not counted; each request here is made twice
// and the second counted. SQLite has no round trips to count.
func TestRoundTripsPerRequest(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, storetest.Postgres)
	var mu sync.Mutex
	trips := map[string]int{}
	e.Main.DB.OnRoundTrip(func(ctx context.Context) {
		if id := api.RequestIDFrom(ctx); id != "" {
			mu.Lock()
			trips[id]++
			mu.Unlock()
		}
	})
	t.Cleanup(func() { e.Main.DB.OnRoundTrip(nil) })
	of := func(r *apptest.Response) int {
		mu.Lock()
		defer mu.Unlock()
		return trips[r.Header.Get("Request-Id")]
	}
	post := func(path, key string, body any) *apptest.Response {
		h := map[string]string{}
		if key != "" {
			h["Idempotency-Key"] = key
		}
		return e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: body, Headers: h})
	}
	for round := range 2 {
		k := fmt.Sprint(round)
		create := post("/v1/payment_intents", "rt-create-"+k, map[string]any{"amount": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		if create.Status != 201 {
			t.Fatalf("create: %d %s", create.Status, create.Body)
		}
		id, _ := create.Map(t)["id"].(string)
		confirm := post("/v1/payment_intents/"+id+"/confirm", "", map[string]string{"otp": "123456"})
		if confirm.Status != 200 {
			t.Fatalf("confirm: %d %s", confirm.Status, confirm.Body)
		}
		create2 := post("/v1/payment_intents", "rt-create2-"+k, map[string]any{"amount": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		if create2.Status != 201 {
			t.Fatalf("second create: %d %s", create2.Status, create2.Body)
		}
		id2, _ := create2.Map(t)["id"].(string)
		keyedConfirm := post("/v1/payment_intents/"+id2+"/confirm", "rt-confirm-"+k, map[string]string{"otp": "123456"})
		if keyedConfirm.Status != 200 {
			t.Fatalf("keyed confirm: %d %s", keyedConfirm.Status, keyedConfirm.Body)
		}
		if round == 0 {
			continue // statements prepared on their connections now
		}
		for _, c := range []struct {
			what string
			r    *apptest.Response
			want int
		}{{"keyed create", create, 1}, {"confirm", confirm, 3}, {"keyed confirm", keyedConfirm, 3}} {
			if got := of(c.r); got != c.want {
				t.Errorf("%s took %d round trips, want %d", c.what, got, c.want)
			}
		}
	}
	if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
		t.Fatal(err)
	}
}
