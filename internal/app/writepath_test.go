package app_test

import (
	"context"
	"sync"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
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
