package payouts_test

import (
	"encoding/json"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// testAmountMinor: a single payout and a sandbox top-up take their amount
// under either name (amount, amount_minor), meaning the same minor units;
// both at once is a 400 naming amount_minor that changes nothing.
func testAmountMinor(t *testing.T, e *apptest.Env) {
	if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount": 10_000}); r.Status != 201 {
		t.Fatalf("top-up with amount: %d %s", r.Status, r.Body)
	}
	if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount": 5, "amount_minor": 5}); r.Status != 400 || errorParam(r) != "amount_minor" {
		t.Fatalf("top-up with both: %d %s", r.Status, r.Body)
	}
	r := e.Post("/v1/payouts", map[string]any{"amount_minor": 700, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"})
	var p payout
	r.JSON(t, &p)
	if r.Status != 201 || p.Amount != 700 || p.Status != "succeeded" {
		t.Fatalf("payout with amount_minor: %d %s", r.Status, r.Body)
	}
	r = e.Post("/v1/payouts", map[string]any{"amount": 700, "amount_minor": 700, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"})
	if r.Status != 400 || errorParam(r) != "amount_minor" {
		t.Fatalf("payout with both: %d %s", r.Status, r.Body)
	}
	if b := balance(t, e, "DJF"); b.Available != 9_300 || b.Reserved != 0 {
		t.Fatalf("balance %+v", b)
	}
	verifyLedger(t, e)
}

// errorParam returns the param of an error answer.
func errorParam(r *apptest.Response) string {
	var eb errBody
	json.Unmarshal(r.Body, &eb)
	return eb.Error.Param
}
