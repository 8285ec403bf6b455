package refunds_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/refunds"
	"github.com/payd/payd/internal/store"
)

// TestFourEyes: above approval_threshold_minor a refund waits for a second
// principal, API keys and portal users alike; its float is held meanwhile.
func TestFourEyes(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		mid := e.Merchant.MerchantID
		want(t, e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 500}), 200, "")
		t.Run("keys", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 2000)
			// At the threshold: no approval needed.
			if re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 500}, ""); re.Status != "succeeded" {
				t.Fatalf("at the threshold: %+v", re)
			}
			avail := balance(t, e, mid, "DJF", ledger.Available)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 600}, "")
			if re.Status != "requires_approval" || re.ApprovedBy != nil {
				t.Fatalf("over the threshold: %+v", re)
			}
			if got := balance(t, e, mid, "DJF", ledger.Available); got != avail-600 {
				t.Fatalf("available %d, want %d: the float is held while it waits", got, avail-600)
			}
			if got := balance(t, e, mid, "DJF", ledger.Reserved); got != 600 {
				t.Fatalf("reserved %d", got)
			}
			want(t, post(e, e.SK, "/v1/refunds/"+re.ID+"/approve", nil, ""), 403, "self_approval_not_allowed")
			r := post(e, e.SK2, "/v1/refunds/"+re.ID+"/approve", nil, "")
			want(t, r, 200, "")
			var ok refund
			r.JSON(t, &ok)
			if ok.Status != "succeeded" || ok.ApprovedBy == nil || !strings.HasPrefix(*ok.ApprovedBy, "key_") {
				t.Fatalf("approved %+v", ok)
			}
			want(t, post(e, e.SK2, "/v1/refunds/"+re.ID+"/approve", nil, ""), 409, "invalid_state")
			want(t, post(e, e.SK, "/v1/refunds/"+re.ID+"/cancel", nil, ""), 409, "invalid_state")
			if got := balance(t, e, mid, "DJF", ledger.Reserved); got != 0 {
				t.Fatalf("reserved %d after success", got)
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 1100 {
				t.Fatalf("intent %+v", in)
			}
			verifyLedger(t, e)
		})
		t.Run("cancel returns the float", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 900)
			avail := balance(t, e, mid, "DJF", ledger.Available)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, "")
			if re.Status != "requires_approval" || re.AmountMinor != 900 {
				t.Fatalf("refund %+v", re)
			}
			// Waiting for approval still counts: nothing more is refundable.
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 1}, ""), 400, "amount_exceeds_refundable")
			r := post(e, e.SK, "/v1/refunds/"+re.ID+"/cancel", nil, "")
			want(t, r, 200, "")
			var c refund
			r.JSON(t, &c)
			if c.Status != "canceled" {
				t.Fatalf("canceled %+v", c)
			}
			if got := balance(t, e, mid, "DJF", ledger.Available); got != avail {
				t.Fatalf("available %d, want %d", got, avail)
			}
			if k := ledgerKinds(t, e, re.ID); !slices.Equal(k, []string{"refund", "refund_failure"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.canceled"}) {
				t.Fatalf("events %v", ev)
			}
			want(t, post(e, e.SK2, "/v1/refunds/"+re.ID+"/approve", nil, ""), 409, "invalid_state")
			want(t, post(e, e.SK, "/v1/refunds/"+re.ID+"/cancel", nil, ""), 409, "invalid_state")
			// Canceled does not count: the whole amount is refundable again.
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 0 {
				t.Fatalf("intent %+v", in)
			}
			verifyLedger(t, e)
		})
		t.Run("approved then failed", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 800)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, "account_closed")
			r := post(e, e.SK2, "/v1/refunds/"+re.ID+"/approve", nil, "")
			want(t, r, 200, "")
			var f refund
			r.JSON(t, &f)
			if f.Status != "failed" || f.FailureCode == nil || *f.FailureCode != "account_not_found" {
				t.Fatalf("approved refund with account_closed: %+v", f)
			}
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.failed"}) {
				t.Fatalf("events %v", ev)
			}
			verifyLedger(t, e)
		})
		t.Run("portal users", func(t *testing.T) {
			svc := e.Main.Refunds()
			ctx := context.Background()
			alice := auth.Principal{ID: "usr_alice", MerchantID: mid, Kind: "user", Role: "admin"}
			bob := auth.Principal{ID: "usr_bob", MerchantID: mid, Kind: "user", Role: "approver"}
			pi := bankPayment(t, e, e.SK, 700)
			re, err := svc.Create(ctx, store.NoClaim, alice, refunds.CreateParams{PaymentIntent: pi})
			if err != nil || re.Status != refunds.RequiresApproval {
				t.Fatalf("user refund: %v %+v", err, re)
			}
			if _, err := svc.Approve(ctx, store.NoClaim, alice, re.ID); !errs.IsCode(err, "self_approval_not_allowed") {
				t.Fatalf("the creating user approved: %v", err)
			}
			ok, err := svc.Approve(ctx, store.NoClaim, bob, re.ID)
			if err != nil || ok.Status != refunds.Succeeded || ok.ApprovedBy == nil || *ok.ApprovedBy != "usr_bob" {
				t.Fatalf("second user: %v %+v", err, ok)
			}
			// A key may approve what a user made, and the other way round.
			pi2 := bankPayment(t, e, e.SK, 700)
			byKey := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi2}, "")
			if got, err := svc.Approve(ctx, store.NoClaim, bob, byKey.ID); err != nil || got.Status != refunds.Succeeded {
				t.Fatalf("user approving a key's refund: %v %+v", err, got)
			}
			verifyLedger(t, e)
		})
	})
}
