package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
)

// payout is what the tests read of a payout.
type payout struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	Reference   string  `json:"reference"`
	FailureCode *string `json:"failure_code"`
}

// fund gives a live merchant available money the only way live mode has:
// a succeeded payment (wallet_c push).
func fund(t *testing.T, m *merchant, amount int64) {
	t.Helper()
	in := m.create(t, map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377999001"}, 201)
	if got := m.settle(t, in.ID); got.Status != "succeeded" {
		t.Fatalf("funding payment: %+v", got)
	}
}

func (m *merchant) payout(t *testing.T, id string) payout {
	t.Helper()
	var p payout
	r := m.get("/v1/payouts/" + id)
	if r.Status != 200 {
		t.Fatalf("payout %s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(t, &p)
	return p
}

// testPayouts sends single payouts and a four-eyes batch through the live
// rails: paid, refused (the simulator's 0000 numbers), the ledger and the
// callbacks consistent with the answers.
func testPayouts(t *testing.T, e *apptest.Env, s *apptest.Sim) {
	m := goLive(t, e, s, "5s", "wallet_c", "wallet_b", "bank_a")
	fund(t, m, 100_000)
	cases := []struct {
		body   map[string]any
		status string
		code   string
	}{
		{map[string]any{"provider": "wallet_b", "recipient_msisdn": "+25377300001", "recipient_name": "Amina Hassan"}, "succeeded", ""},
		{map[string]any{"provider": "bank_a", "recipient_account": "DJ0012345678"}, "succeeded", ""},
		{map[string]any{"provider": "wallet_b", "recipient_msisdn": "+25377300000"}, "failed", "account_not_found"},
		{map[string]any{"provider": "wallet_b", "recipient_msisdn": "+253000000002"}, "succeeded", ""}, // a magic number means nothing live
	}
	want := int64(100_000)
	for _, c := range cases {
		body := map[string]any{"amount": 1000, "currency": "DJF"}
		for k, v := range c.body {
			body[k] = v
		}
		r := m.post("/v1/payouts", body)
		if want := map[string]int{"succeeded": 201, "failed": 201}[c.status]; r.Status != want {
			t.Fatalf("payout %v: %d %s", c.body, r.Status, r.Body)
		}
		var p payout
		r.JSON(t, &p)
		if p.Status != c.status || c.code != "" && (p.FailureCode == nil || *p.FailureCode != c.code) {
			t.Fatalf("payout %v: %s", c.body, r.Body)
		}
		if c.status == "succeeded" {
			want -= 1000
		}
	}
	if a := m.available(t, "DJF"); a != want {
		t.Fatalf("available %d, want %d", a, want)
	}

	// A four-eyes batch: made with one live key, approved with another.
	k2, err := e.Main.Merchants.CreateKey(context.Background(), m.id, true, auth.KindSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := m.post("/v1/payouts/bulk", map[string]any{"currency": "DJF", "rows": []map[string]any{
		{"recipient_msisdn": "+25377300011", "amount": 500, "provider": "wallet_b", "reference": "row1"},
		{"recipient_account": "DJ0099887766", "amount": 700, "provider": "bank_a", "reference": "row2"},
		{"recipient_account": "DJ0099880000", "amount": 900, "provider": "bank_a", "reference": "row3"},
	}})
	if r.Status != 201 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	var b struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	r.JSON(t, &b)
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: k2.Secret}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		m.get("/v1/payouts/bulk/"+b.ID).JSON(t, &b)
		if b.Status == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b.Status != "completed" {
		t.Fatalf("batch %s", b.Status)
	}
	var l struct{ Data []payout }
	m.get("/v1/payouts?limit=100&batch_id="+b.ID).JSON(t, &l)
	got := map[string]string{}
	for _, p := range l.Data {
		got[p.Reference] = p.Status
	}
	if got["row1"] != "succeeded" || got["row2"] != "succeeded" || got["row3"] != "failed" {
		t.Fatalf("rows %v", got)
	}
	if a := m.available(t, "DJF"); a != want-1200 {
		t.Fatalf("available %d, want %d", a, want-1200)
	}
	// Every paid payout is one posting to the provider's clearing account,
	// whatever mix of answers and callbacks reported it.
	if n := count(t, e, `SELECT COUNT(*) FROM ledger_transactions t JOIN payouts p ON p.id = t.reference
		WHERE p.merchant_id = ? AND t.kind = 'payout_paid'`, m.id); n != 5 {
		t.Fatalf("%d payout postings, want 5", n)
	}
	waitCallbacks(t, e, m.id, 7) // 5 paid, 2 refused
	m.requireNoSecrets(t)
}

// waitCallbacks waits until at least n callbacks were recorded for a
// merchant (they are posted asynchronously).
func waitCallbacks(t *testing.T, e *apptest.Env, merchantID string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for count(t, e, "SELECT COUNT(*) FROM provider_callbacks WHERE merchant_id = ? AND object_id NOT LIKE 'pi_%'", merchantID) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d payout callbacks recorded", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
