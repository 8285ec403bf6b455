package live_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// testHeldCardPage: live manual capture on the provider's hosted card page.
// The payment is initiated with capture false, so the approved card is held
// at the provider (authorized) and the intent is requires_capture with
// nothing credited; a partial capture captures at the provider and credits
// the captured amount once; a cancel voids the provider's authorisation.
func testHeldCardPage(t *testing.T, e *apptest.Env, s *apptest.Sim) {
	m := goLive(t, e, s, "5s", "wallet_a")
	ret := "https://shop.example/return"
	held := func(t *testing.T) intent {
		t.Helper()
		in := m.create(t, map[string]any{"amount": 1000, "currency": "USD", "provider": "wallet_a", "capture_method": "manual",
			"return_url": ret, "metadata": map[string]string{"wallet_a_mode": "card"}}, 201)
		if in.Status != "requires_action" || in.NextAction == nil || in.NextAction.Type != "redirect" {
			t.Fatalf("created: %+v", in)
		}
		to := submitPage(t, in.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2099"}, "cvc": {"123"}})
		if to != ret+"?payment_intent="+in.ID {
			t.Fatalf("the provider's page sent the customer to %q", to)
		}
		got := m.settle(t, in.ID)
		if got.Status != "requires_capture" {
			t.Fatalf("after the card page: %+v", got)
		}
		if st, _ := providerPayment(t, s, m, in.ID); st != "authorized" {
			t.Fatalf("the provider's payment is %s, want authorized", st)
		}
		return got
	}
	before := m.available(t, "USD")

	t.Run("partial capture", func(t *testing.T) {
		in := held(t)
		if a := m.available(t, "USD"); a != before {
			t.Fatalf("available %d while held, %d before", a, before)
		}
		got := decode(t, m.post("/v1/payment_intents/"+in.ID+"/capture", map[string]int64{"amount_to_capture_minor": 600}), 200)
		if got.Status != "succeeded" || got.AmountCapturedMinor != 600 {
			t.Fatalf("captured: %+v", got)
		}
		if st, captured := providerPayment(t, s, m, in.ID); st != "succeeded" || captured != 600 {
			t.Fatalf("the provider's payment: %s captured %d", st, captured)
		}
		settledOnce(t, e, in.ID)
		if a := m.available(t, "USD"); a != before+600 {
			t.Fatalf("available %d, want %d", a, before+600)
		}
	})

	t.Run("cancel voids", func(t *testing.T) {
		in := held(t)
		got := decode(t, m.post("/v1/payment_intents/"+in.ID+"/cancel", map[string]string{"cancellation_reason": "duplicate"}), 200)
		if got.Status != "canceled" {
			t.Fatalf("canceled: %+v", got)
		}
		if st, _ := providerPayment(t, s, m, in.ID); st != "failed" {
			t.Fatalf("the provider's payment is %s, want failed (voided)", st)
		}
		if n := count(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", in.ID); n != 0 {
			t.Fatalf("%d ledger transactions for a released authorisation", n)
		}
	})
}

// providerPayment is the provider's status and captured amount of an
// intent's payment.
func providerPayment(t *testing.T, s *apptest.Sim, m *merchant, id string) (string, int64) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/wallet_a/v1/payments?reference="+url.QueryEscape(id), nil)
	req.Header.Set("Authorization", "Bearer prov_key_wallet_a_"+m.id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Status        string `json:"status"`
		CapturedMinor int64  `json:"captured_minor"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != 200 {
		t.Fatalf("provider payment of %s: %d %v", id, resp.StatusCode, err)
	}
	return p.Status, p.CapturedMinor
}
