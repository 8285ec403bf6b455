package live_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// testFlows walks every row of the flow-per-provider table (docs/payments.md) in live
// mode, against the simulator: the next action, what the customer does at
// the provider, and the intent settling once with its credit.
func testFlows(t *testing.T, e *apptest.Env, s *apptest.Sim) {
	m := goLive(t, e, s, "5s", "bank_a", "bank_b", "wallet_a", "wallet_c", "wallet_d")
	ret := "https://shop.example/return"
	page := func(provider string) func(t *testing.T, in intent) {
		return func(t *testing.T, in intent) {
			if in.NextAction == nil || in.NextAction.Type != "redirect" || !strings.HasPrefix(in.NextAction.RedirectURL, s.URL+"/"+provider+"/pay/") {
				t.Fatalf("next_action %+v, want a redirect to the provider's page", in.NextAction)
			}
		}
	}
	otp := func(msisdn string) func(t *testing.T, in intent) intent {
		return func(t *testing.T, in intent) intent {
			if in.NextAction == nil || in.NextAction.Type != "collect_otp" || in.NextAction.OTPLength != 6 {
				t.Fatalf("next_action %+v", in.NextAction)
			}
			return decode(t, m.post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": s.OTP(msisdn)}), 200)
		}
	}
	// A push the simulator approves a moment after the create may be handled
	// before the create answers: the intent is then already succeeded.
	push := func(t *testing.T, in intent) intent {
		if in.Status == "succeeded" {
			paidByCallback(t, e, in.ID)
			return m.settle(t, in.ID)
		}
		if in.NextAction == nil || in.NextAction.Type != "push_approval" {
			t.Fatalf("next_action %+v", in.NextAction)
		}
		return m.settle(t, in.ID)
	}
	onPage := func(provider string, forms ...url.Values) func(t *testing.T, in intent) intent {
		return func(t *testing.T, in intent) intent {
			page(provider)(t, in)
			var to string
			for _, f := range forms {
				to = submitPage(t, in.NextAction.RedirectURL, f)
			}
			if to != ret+"?payment_intent="+in.ID {
				t.Fatalf("the provider's page sent the customer to %q", to)
			}
			return m.settle(t, in.ID)
		}
	}
	card := func(number string) url.Values {
		return url.Values{"card_number": {number}, "exp_month": {"12"}, "exp_year": {"2099"}, "cvc": {"123"}}
	}
	cases := []struct {
		name    string
		body    map[string]any
		do      func(t *testing.T, in intent) intent
		status  string
		details string
	}{
		{"bank_a SMS code, bare local number", map[string]any{"provider": "bank_a", "customer_msisdn": "+25377100001"},
			otp("+25377100001"), "succeeded", ""},
		{"bank_a given the bare number", map[string]any{"provider": "bank_a", "customer_msisdn": "77100002"},
			otp("77100002"), "succeeded", ""},
		{"bank_b SMS code", map[string]any{"provider": "bank_b", "customer_msisdn": "+25377100003"},
			otp("+25377100003"), "succeeded", ""},
		{"wallet_a hosted page, phone and PIN", map[string]any{"provider": "wallet_a", "return_url": ret, "metadata": map[string]string{"wallet_a_mode": "hpp"}},
			onPage("wallet_a", url.Values{"phone": {"+25377100004"}, "pin": {"4321"}}), "succeeded", ""},
		{"wallet_a card", map[string]any{"provider": "wallet_a", "return_url": ret, "metadata": map[string]string{"wallet_a_mode": "card"}},
			onPage("wallet_a", card("4242424242424242")), "succeeded", `"last4":"4242"`},
		{"wallet_a card with 3-D Secure", map[string]any{"provider": "wallet_a", "return_url": ret, "metadata": map[string]string{"wallet_a_mode": "card"}},
			onPage("wallet_a", card("4000000000003220"), url.Values{"outcome": {"complete"}}), "succeeded", `"last4":"3220"`},
		{"wallet_a push (no mode)", map[string]any{"provider": "wallet_a", "customer_msisdn": "+25377100005"},
			push, "succeeded", ""},
		{"wallet_c APP", map[string]any{"provider": "wallet_c", "customer_msisdn": "+25377100006", "metadata": map[string]string{"auth_mode": "APP"}},
			push, "succeeded", ""},
		{"wallet_c OTP", map[string]any{"provider": "wallet_c", "customer_msisdn": "+25377100007", "metadata": map[string]string{"auth_mode": "OTP"}},
			otp("+25377100007"), "succeeded", ""},
		{"wallet_d method picker", map[string]any{"provider": "wallet_d", "currency": "ETB", "return_url": ret},
			onPage("wallet_d", url.Values{"method": {"cbebirr"}}), "succeeded", `"method":"cbebirr"`},
		{"wallet_d direct push", map[string]any{"provider": "wallet_d", "currency": "ETB", "customer_msisdn": "+251911100008",
			"metadata": map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "telebirr"}}, push, "succeeded", `"method":"telebirr"`},
		{"wallet_d direct SMS code", map[string]any{"provider": "wallet_d", "currency": "ETB", "customer_msisdn": "+251911100009",
			"metadata": map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "amole"}}, otp("+251911100009"), "succeeded", ""},
		{"wallet_a card declined", map[string]any{"provider": "wallet_a", "return_url": ret, "metadata": map[string]string{"wallet_a_mode": "card"}},
			onPage("wallet_a", card("4000000000000002")), "canceled", ""},
		{"wallet_a card 3-D Secure failed", map[string]any{"provider": "wallet_a", "return_url": ret, "metadata": map[string]string{"wallet_a_mode": "card"}},
			onPage("wallet_a", card("4000000000003220"), url.Values{"outcome": {"fail"}}), "canceled", ""},
	}
	var bodies [][]byte
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"amount": 250, "currency": "DJF"}
			for k, v := range c.body {
				body[k] = v
			}
			cur := body["currency"].(string)
			before := m.available(t, cur)
			r := m.post("/v1/payment_intents", body)
			bodies = append(bodies, r.Body)
			in := decode(t, r, 201)
			// The push cases (the customer approves in the wallet's app).
			pushed := strings.Contains(c.name, "push") || strings.Contains(c.name, "APP")
			pushedFirst := pushed && in.Status == "succeeded"
			if in.Status != "requires_action" && !pushedFirst || !in.Livemode {
				t.Fatalf("created %s (livemode %v)", in.Status, in.Livemode)
			}
			got := c.do(t, in)
			if got.Status != c.status {
				t.Fatalf("status %s, want %s (last_error %+v)", got.Status, c.status, got.LastError)
			}
			if c.details != "" && !strings.Contains(string(got.PaymentMethodDetails), c.details) {
				t.Fatalf("payment_method_details %s, want %s", got.PaymentMethodDetails, c.details)
			}
			want := before
			if c.status == "succeeded" {
				settledOnce(t, e, in.ID)
				want += got.AmountCapturedMinor
				if got.AmountCapturedMinor != got.AmountMinor {
					t.Fatalf("captured %d of %d", got.AmountCapturedMinor, got.AmountMinor)
				}
			} else if got.LastError == nil || got.LastError.Provider != body["provider"] {
				t.Fatalf("last_error %+v", got.LastError)
			}
			if a := m.available(t, cur); a != want {
				t.Fatalf("available %d, want %d", a, want)
			}
		})
	}
	m.requireNoSecrets(t, bodies...)
}

// testRefusals: what live mode refuses, and that sandbox inputs mean
// nothing there.
func testRefusals(t *testing.T, e *apptest.Env, s *apptest.Sim) {
	m := goLive(t, e, s, "5s", "bank_a", "wallet_a", "wallet_c", "wallet_d")
	t.Run("wrong code is the only attempt", func(t *testing.T) {
		in := m.create(t, map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377200001"}, 201)
		code := s.OTP("+25377200001")
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		r := m.post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": wrong})
		if r.Status != 400 || r.ErrorCode() != "otp_invalid" {
			t.Fatalf("wrong code: %d %s", r.Status, r.Body)
		}
		if got := m.intent(t, in.ID); got.Status != "canceled" || got.LastError.Code != "otp_invalid" {
			t.Fatalf("after a wrong code: %+v", got)
		}
		if r := m.post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": code}); r.Status != 409 {
			t.Fatalf("second confirm: %d %s", r.Status, r.Body)
		}
	})
	t.Run("scenario header and magic numbers are ignored", func(t *testing.T) {
		in := m.create(t, map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+253000000002"}, 201,
			"X-Service-Scenario", "kyc_blocked")
		if got := m.settle(t, in.ID); got.Status != "succeeded" {
			t.Fatalf("magic number in live mode: %+v", got)
		}
		r := m.post("/v1/sandbox/overrides", map[string]string{"payment_intent_id": in.ID, "scenario": "success"})
		if r.Status != 403 || r.ErrorCode() != "permission_denied" {
			t.Fatalf("sandbox endpoint with a live key: %d %s", r.Status, r.Body)
		}
	})
	t.Run("provider refusal", func(t *testing.T) {
		in := m.create(t, map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377110000"}, 402)
		if in.Status != "canceled" || in.LastError == nil || in.LastError.Code != "insufficient_funds" || in.LastError.Provider != "wallet_c" {
			t.Fatalf("refused: %+v", in)
		}
	})
	t.Run("wallet_d direct needs the customer's number", func(t *testing.T) {
		n := count(t, e, "SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ?", m.id)
		r := m.post("/v1/payment_intents", map[string]any{"amount": 10, "currency": "ETB", "provider": "wallet_d",
			"metadata": map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "mpesa"}})
		if r.Status != 400 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if count(t, e, "SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ?", m.id) != n {
			t.Fatal("a refused create wrote an intent")
		}
	})
	t.Run("provider not connected", func(t *testing.T) {
		r := m.post("/v1/payment_intents", map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_b", "customer_msisdn": "+25377200002"})
		if r.Status != 503 || r.ErrorCode() != "provider_unavailable" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}
