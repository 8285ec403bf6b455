package refunds_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/sim"
)

// liveConfig: reconciliation every 100 ms.
func liveConfig(c *app.Config) { c.ReconcileInterval = 100 * time.Millisecond }

// liveMerchant makes a merchant with approved KYC whose bank_a is connected
// to s with the given call timeout, and returns its id and live secret key.
func liveMerchant(t *testing.T, e *apptest.Env, s *apptest.Sim, name, timeout string) (string, string) {
	t.Helper()
	ctx := context.Background()
	c, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Main.Merchants.SetKYC(ctx, c.MerchantID, "approved"); err != nil {
		t.Fatal(err)
	}
	if err := e.Main.Merchants.ConnectProvider(ctx, c.MerchantID, "bank_a", merchants.ProviderConfig{BaseURL: s.URL + "/bank_a",
		APIKey: "prov_key_" + c.MerchantID, CallbackSecret: "prov_cbsec_" + c.MerchantID, Timeout: timeout}); err != nil {
		t.Fatal(err)
	}
	k, err := e.Main.Merchants.CreateKey(ctx, c.MerchantID, true, auth.KindSecret)
	if err != nil {
		t.Fatal(err)
	}
	return c.MerchantID, k.Secret
}

// livePayment makes a succeeded live bank_a payment, the code read from the simulator.
func livePayment(t *testing.T, e *apptest.Env, s *apptest.Sim, key, msisdn string, amount int64) string {
	t.Helper()
	r := post(e, key, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a",
		"customer_msisdn": msisdn}, "")
	want(t, r, 201, "")
	var in intent
	r.JSON(t, &in)
	want(t, post(e, key, "/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": s.OTP(msisdn)}, ""), 200, "")
	if got := getIntent(t, e, key, in.ID); got.Status != "succeeded" {
		t.Fatalf("live payment %s is %s", in.ID, got.Status)
	}
	return in.ID
}

// TestLiveRefunds: a live refund goes through the provider's refund call;
// its outcome is recorded exactly once whether the answer, a callback (even
// twice, even before the answer) or reconciliation brings it.
func TestLiveRefunds(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		t.Run("answer and duplicate callbacks", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{DuplicateCallbacks: true, AnswerDelay: 150 * time.Millisecond})
			mid, key := liveMerchant(t, e, s, "Live refunds", "5s")
			pi := livePayment(t, e, s, key, "+25377200001", 1000)
			re := createRefund(t, e, key, map[string]any{"payment_intent": pi, "amount_minor": 400}, "")
			if re.Status != "succeeded" || !re.Livemode {
				t.Fatalf("live refund %+v", re)
			}
			s.SetRefundFailureRate(1)
			f := createRefund(t, e, key, map[string]any{"payment_intent": pi}, "")
			if f.Status != "failed" || f.FailureCode == nil || *f.FailureCode != "refund_declined" || f.AmountMinor != 600 {
				t.Fatalf("refused live refund %+v", f)
			}
			s.SetRefundFailureRate(0)
			time.Sleep(300 * time.Millisecond) // let the duplicate callbacks arrive
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.succeeded"}) {
				t.Fatalf("events %v", ev)
			}
			if ev := eventTypes(t, e, f.ID); !slices.Equal(ev, []string{"refund.created", "refund.failed"}) {
				t.Fatalf("events %v", ev)
			}
			if in := getIntent(t, e, key, pi); in.AmountRefundedMinor != 400 {
				t.Fatalf("intent %+v", in)
			}
			if got := balanceIn(t, e, true, mid, "DJF", ledger.Reserved); got != 0 {
				t.Fatalf("reserved %d", got)
			}
			// The scenario header means nothing in live mode.
			if r := createRefund(t, e, key, map[string]any{"payment_intent": pi, "amount_minor": 10}, "account_closed"); r.Status != "succeeded" {
				t.Fatalf("scenario header in live mode: %+v", r)
			}
			verifyLedger(t, e)
		})
		t.Run("no answer: reconciliation settles once", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{DropCallbacks: true, HangFor: 5 * time.Second})
			mid, key := liveMerchant(t, e, s, "Live refunds, no callbacks", "300ms")
			pi := livePayment(t, e, s, key, "+25377200002", 900)
			s.SetFaults(0, 1)
			re := createRefund(t, e, key, map[string]any{"payment_intent": pi}, "")
			s.SetFaults(0, 0)
			// No answer and no callbacks: only reconciliation can settle it
			// (it may already have, while the call hung).
			if re.Status != "pending" && re.Status != "succeeded" {
				t.Fatalf("a refund without an answer is %s", re.Status)
			}
			// Reconciliation may settle it any moment: the float is checked
			// only if the refund was still pending after it was read.
			if got := balanceIn(t, e, true, mid, "DJF", ledger.Reserved); got != 900 && getRefund(t, e, key, re.ID).Status == "pending" {
				t.Fatalf("reserved %d while pending", got)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				got := getRefund(t, e, key, re.ID)
				if got.Status == "succeeded" {
					break
				}
				if got.Status != "pending" || time.Now().After(deadline) {
					t.Fatalf("reconciliation left the refund %s", got.Status)
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // more reconciliation runs find nothing to do
			if ev := eventTypes(t, e, re.ID); !slices.Equal(ev, []string{"refund.created", "refund.succeeded"}) {
				t.Fatalf("events %v", ev)
			}
			if k := ledgerKinds(t, e, re.ID); !slices.Equal(k, []string{"refund", "refund_settlement"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			if got := balanceIn(t, e, true, mid, "DJF", ledger.Reserved); got != 0 {
				t.Fatalf("reserved %d", got)
			}
			verifyLedger(t, e)
		})
		t.Run("provider down: recorded pending", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{})
			_, key := liveMerchant(t, e, s, fmt.Sprintf("Disconnected %d", time.Now().UnixNano()), "1s")
			pi := livePayment(t, e, s, key, "+25377200003", 500)
			if err := s.Shutdown(context.Background()); err != nil {
				t.Log(err)
			}
			n := count(t, e, "SELECT COUNT(*) FROM refunds")
			r := post(e, key, "/v1/refunds", map[string]any{"payment_intent": pi}, "")
			// The provider is down: the refund is recorded pending and
			// reconciliation asks again later.
			if r.Status != 201 {
				t.Fatalf("refund with the provider down: %d %s", r.Status, r.Body)
			}
			if got := count(t, e, "SELECT COUNT(*) FROM refunds"); got != n+1 {
				t.Fatalf("refunds %d → %d", n, got)
			}
		})
	}, liveConfig)
}
