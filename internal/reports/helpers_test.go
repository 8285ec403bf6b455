package reports_test

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// txn is a balance transaction as the API answers it.
type txn struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Type              string `json:"type"`
	AmountMinor       int64  `json:"amount_minor"`
	Currency          string `json:"currency"`
	Source            string `json:"source"`
	BalanceAfterMinor int64  `json:"balance_after_minor"`
	Livemode          bool   `json:"livemode"`
	CreatedAt         string `json:"created_at"`
}

type txnList struct {
	Object  string `json:"object"`
	Data    []txn  `json:"data"`
	HasMore bool   `json:"has_more"`
}

var keySeq atomic.Int64

func idemKey() string { return fmt.Sprintf("reports-test-%d", keySeq.Add(1)) }

func topup(t testing.TB, e *apptest.Env, currency string, amount int64) {
	t.Helper()
	if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": currency, "amount_minor": amount}); r.Status != 201 {
		t.Fatalf("topup: %d %s", r.Status, r.Body)
	}
}

// pay takes a bank_a payment of amount DJF minor units through the sandbox
// (create, then confirm with the sandbox's code) and returns its id.
func pay(t testing.TB, e *apptest.Env, amount int64) string {
	t.Helper()
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Headers: map[string]string{"Idempotency-Key": idemKey()},
		Body: map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}})
	if r.Status != 201 {
		t.Fatalf("create intent: %d %s", r.Status, r.Body)
	}
	id, _ := r.Map(t)["id"].(string)
	if r := e.Post("/v1/payment_intents/"+id+"/confirm", map[string]string{"otp": "123456"}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	return id
}

// payout sends a DJF payout; scenario "insufficient_funds" makes the rail
// refuse it (reserved, then released). It returns the payout's id.
func payout(t testing.TB, e *apptest.Env, amount int64, scenario string) string {
	t.Helper()
	h := map[string]string{}
	if scenario != "" {
		h["X-Service-Scenario"] = scenario
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.SK, Headers: h,
		Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}})
	if r.Status != 201 {
		t.Fatalf("payout: %d %s", r.Status, r.Body)
	}
	id, _ := r.Map(t)["id"].(string)
	return id
}

// list GETs one page of balance transactions.
func list(t testing.TB, e *apptest.Env, q url.Values) txnList {
	t.Helper()
	r := e.Get("/v1/balance_transactions?" + q.Encode())
	if r.Status != 200 {
		t.Fatalf("list %s: %d %s", q.Encode(), r.Status, r.Body)
	}
	var l txnList
	r.JSON(t, &l)
	return l
}

// listAll walks every page (newest first) with pages of limit.
func listAll(t testing.TB, e *apptest.Env, q url.Values, limit int) []txn {
	t.Helper()
	var out []txn
	q = cloneValues(q)
	q.Set("limit", fmt.Sprint(limit))
	for {
		l := list(t, e, q)
		out = append(out, l.Data...)
		if !l.HasMore {
			return out
		}
		q.Set("starting_after", l.Data[len(l.Data)-1].ID)
	}
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// available returns the merchant's test-mode available balance per currency.
func available(t testing.TB, e *apptest.Env) map[string]int64 {
	t.Helper()
	bs, err := ledger.Balances(context.Background(), e.Main.DB, e.Merchant.MerchantID, false)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, b := range bs {
		out[b.Currency] = b.Available
	}
	return out
}

// checkHistory asserts the invariants of a merchant's whole history: per
// currency the amounts sum to available, each balance_after is the previous
// one plus the amount (oldest first, starting from zero) and the newest
// equals available; and the ledger verifies.
func checkHistory(t testing.TB, e *apptest.Env, all []txn) {
	t.Helper()
	avail := available(t, e)
	sums := map[string]int64{}
	for i := len(all) - 1; i >= 0; i-- {
		x := all[i]
		sums[x.Currency] += x.AmountMinor
		if x.BalanceAfterMinor != sums[x.Currency] {
			t.Fatalf("%s (%s %d %s): balance_after_minor %d, want %d", x.ID, x.Type, x.AmountMinor, x.Currency, x.BalanceAfterMinor, sums[x.Currency])
		}
	}
	for cur, a := range avail {
		if sums[cur] != a {
			t.Fatalf("%s: balance transactions sum to %d, available is %d", cur, sums[cur], a)
		}
	}
	for cur, s := range sums {
		if avail[cur] != s {
			t.Fatalf("%s: balance transactions sum to %d, available is %d", cur, s, avail[cur])
		}
	}
	if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
		t.Fatal(err)
	}
}

// noWorkers starts payd without its background workers, for tests that
// move the database clock: a worker reading it while the test sets it would
// race. Sandbox payments, payouts and top-ups complete within their requests.
func noWorkers(c *app.Config) { c.Workers = false }
