package refunds_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
)

// TestRefunds walks every rule of refunds on both engines: statuses, error
// codes, money movements (checked with ledger.Verify), events and isolation.
func TestRefunds(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		mid := e.Merchant.MerchantID
		t.Run("full refund by default", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 1000)
			before := balance(t, e, mid, "DJF", ledger.Available)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "reason": "requested_by_customer",
				"metadata": map[string]string{"order": "42"}}, "")
			if re.Status != "succeeded" || re.AmountMinor != 1000 || re.Currency != "DJF" || re.PaymentIntent != pi ||
				!strings.HasPrefix(re.ID, "re_") || re.Object != "refund" || re.SucceededAt == nil || re.FailedAt != nil ||
				re.Reason == nil || *re.Reason != "requested_by_customer" || re.Metadata["order"] != "42" || re.Livemode {
				t.Fatalf("refund %+v", re)
			}
			if got := balance(t, e, mid, "DJF", ledger.Available); got != before-1000 {
				t.Fatalf("available %d, want %d", got, before-1000)
			}
			if got := balance(t, e, mid, "DJF", ledger.Reserved); got != 0 {
				t.Fatalf("reserved %d", got)
			}
			in := getIntent(t, e, e.SK, pi)
			if in.Status != "succeeded" || in.AmountRefundedMinor != 1000 || !in.Refunded {
				t.Fatalf("intent after refund %+v", in)
			}
			if k := ledgerKinds(t, e, re.ID); !slices.Equal(k, []string{"refund", "refund_settlement"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.succeeded"}) {
				t.Fatalf("events %v", ev)
			}
			// Nothing is left: a default refund and any amount are refused.
			r := post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi}, "")
			want(t, r, 400, "amount_exceeds_refundable")
			if p := errParam(t, r); p != "amount_minor" {
				t.Fatalf("param %q", p)
			}
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 1}, ""), 400, "amount_exceeds_refundable")
			verifyLedger(t, e)
		})
		t.Run("partial refunds", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 1000)
			a := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 300}, "")
			if a.Status != "succeeded" || a.AmountMinor != 300 {
				t.Fatalf("first %+v", a)
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 300 || in.Refunded {
				t.Fatalf("intent %+v", in)
			}
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 701}, ""), 400, "amount_exceeds_refundable")
			b := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, "")
			if b.AmountMinor != 700 {
				t.Fatalf("the default is what is left: %+v", b)
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 1000 || !in.Refunded || in.Status != "succeeded" {
				t.Fatalf("intent %+v", in)
			}
			verifyLedger(t, e)
		})
		t.Run("account_closed fails and returns the float", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 500)
			before := balance(t, e, mid, "DJF", ledger.Available)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, "account_closed")
			if re.Status != "failed" || re.FailureCode == nil || *re.FailureCode != "account_not_found" || re.FailedAt == nil ||
				re.FailureMessage == nil || re.SucceededAt != nil {
				t.Fatalf("refund %+v", re)
			}
			if got := balance(t, e, mid, "DJF", ledger.Available); got != before {
				t.Fatalf("available %d, want %d", got, before)
			}
			if k := ledgerKinds(t, e, re.ID); !slices.Equal(k, []string{"refund", "refund_failure"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.failed"}) {
				t.Fatalf("events %v", ev)
			}
			// A failed refund does not count: the whole amount is refundable again.
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 0 || in.Refunded {
				t.Fatalf("intent %+v", in)
			}
			if again := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, ""); again.AmountMinor != 500 || again.Status != "succeeded" {
				t.Fatalf("refund after a failure %+v", again)
			}
			verifyLedger(t, e)
		})
		t.Run("network_timeout is pending then succeeds", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 400)
			reservedBefore := balance(t, e, mid, "DJF", ledger.Reserved)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, "network_timeout")
			if re.Status != "pending" || re.SucceededAt != nil {
				t.Fatalf("refund %+v", re)
			}
			if got := balance(t, e, mid, "DJF", ledger.Reserved); got != reservedBefore+400 {
				t.Fatalf("reserved %d while pending, want %d", got, reservedBefore+400)
			}
			// While pending nothing more is refundable.
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi}, ""), 400, "amount_exceeds_refundable")
			done := waitRefund(t, e, re.ID)
			if done.Status != "succeeded" || done.SucceededAt == nil {
				t.Fatalf("after the delay %+v", done)
			}
			if got := balance(t, e, mid, "DJF", ledger.Reserved); got != reservedBefore {
				t.Fatalf("reserved %d after success", got)
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 400 || !in.Refunded {
				t.Fatalf("intent %+v", in)
			}
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.succeeded"}) {
				t.Fatalf("events %v", ev)
			}
			verifyLedger(t, e)
		})
		t.Run("bad input changes nothing", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 300)
			n := count(t, e, "SELECT COUNT(*) FROM refunds")
			// Idempotency-Key is required.
			want(t, e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: map[string]any{"payment_intent": pi}}),
				400, "idempotency_key_required")
			for _, c := range []struct {
				body     map[string]any
				scenario string
				code     string
				param    string
			}{
				{map[string]any{}, "", "parameter_missing", "payment_intent"},
				{map[string]any{"payment_intent": pi, "amount_minor": 0}, "", "amount_invalid", "amount_minor"},
				{map[string]any{"payment_intent": pi, "amount_minor": -5}, "", "amount_invalid", "amount_minor"},
				{map[string]any{"payment_intent": pi, "reason": "changed_mind"}, "", "parameter_invalid", "reason"},
				{map[string]any{"payment_intent": pi, "amount_minor": 301}, "", "amount_exceeds_refundable", "amount_minor"},
				{map[string]any{"payment_intent": pi}, "no_such_scenario", "invalid_scenario", "X-Service-Scenario"},
				{map[string]any{"payment_intent": pi}, "kyc_blocked", "invalid_scenario", "X-Service-Scenario"},
				{map[string]any{"payment_intent": pi, "metadata": map[string]string{strings.Repeat("k", 41): "v"}}, "", "parameter_invalid", "metadata"},
			} {
				r := post(e, e.SK, "/v1/refunds", c.body, c.scenario)
				want(t, r, 400, c.code)
				if p := errParam(t, r); p != c.param {
					t.Fatalf("%v: param %q, want %q", c.body, p, c.param)
				}
			}
			r := post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": "pi_nothere"}, "")
			want(t, r, 404, "resource_missing")
			// Only a succeeded intent can be refunded.
			open := post(e, e.SK, "/v1/payment_intents", map[string]any{"amount_minor": 100, "currency": "DJF", "provider": "bank_a",
				"customer_msisdn": "77123456"}, "")
			want(t, open, 201, "")
			openID, _ := open.Map(t)["id"].(string)
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": openID}, ""), 409, "invalid_state")
			if got := count(t, e, "SELECT COUNT(*) FROM refunds"); got != n {
				t.Fatalf("bad input wrote %d refunds", got-n)
			}
		})
		t.Run("insufficient balance writes nothing", func(t *testing.T) {
			other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Thin merchant"})
			if err != nil {
				t.Fatal(err)
			}
			key := other.SecretKeys[0]
			pi := bankPayment(t, e, key, 1000)
			want(t, post(e, key, "/v1/payouts", map[string]any{"amount": 700, "currency": "DJF", "provider": "wallet_a",
				"recipient_msisdn": "+25377000001", "recipient_name": "Amina Ali"}, ""), 201, "")
			if got := balance(t, e, other.MerchantID, "DJF", ledger.Available); got != 300 {
				t.Fatalf("available %d before the refund", got)
			}
			n := count(t, e, "SELECT COUNT(*) FROM refunds")
			want(t, post(e, key, "/v1/refunds", map[string]any{"payment_intent": pi}, ""), 402, "insufficient_balance")
			if got := count(t, e, "SELECT COUNT(*) FROM refunds"); got != n {
				t.Fatalf("a refused refund was written")
			}
			if got := balance(t, e, other.MerchantID, "DJF", ledger.Available); got != 300 {
				t.Fatalf("available %d after the refusal", got)
			}
			// The intent's refundable amount was not touched: 300 still goes through.
			if re := createRefund(t, e, key, map[string]any{"payment_intent": pi, "amount_minor": 300}, ""); re.Status != "succeeded" {
				t.Fatalf("refund %+v", re)
			}
			verifyLedger(t, e)
		})
		t.Run("isolation by merchant and mode", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 200)
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 50}, "")
			other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
			if err != nil {
				t.Fatal(err)
			}
			live := e.LiveKey(t, "bank_a")
			for _, key := range []string{other.SecretKeys[0], live} {
				want(t, e.Do(apptest.Request{Method: "GET", Path: "/v1/refunds/" + re.ID, Key: key}), 404, "resource_missing")
				want(t, post(e, key, "/v1/refunds", map[string]any{"payment_intent": pi}, ""), 404, "resource_missing")
				want(t, post(e, key, "/v1/refunds/"+re.ID+"/cancel", nil, ""), 404, "resource_missing")
				l := e.Do(apptest.Request{Method: "GET", Path: "/v1/refunds?payment_intent=" + pi, Key: key})
				want(t, l, 200, "")
				if data := l.Map(t)["data"].([]any); len(data) != 0 {
					t.Fatalf("another merchant or mode lists %d refunds", len(data))
				}
			}
			want(t, e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.PK, Body: map[string]any{"payment_intent": pi},
				Headers: map[string]string{"Idempotency-Key": idemKey()}}), 403, "permission_denied")
		})
		t.Run("idempotent create", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 200)
			h := map[string]string{"Idempotency-Key": idemKey()}
			body := map[string]any{"payment_intent": pi, "amount_minor": 80}
			a := e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: body, Headers: h})
			b := e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: body, Headers: h})
			if a.Status != 201 || b.Status != 201 || string(a.Body) != string(b.Body) || b.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %d %s", a.Status, b.Status, b.Header.Get("Idempotent-Replayed"))
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 80 {
				t.Fatalf("a replay refunded again: %+v", in)
			}
		})
		verifyLedger(t, e)
	})
}
