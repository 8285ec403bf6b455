package payments_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
)

// TestScenarioSources: the magic number, read as sent; the header wins.
func testScenarioSources(t *testing.T, e *apptest.Env) {
	walletA := func(msisdn string) map[string]any {
		return map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_a", "customer_msisdn": msisdn}
	}
	in := decode(t, mustStatus(t, create(e, walletA("+253000000002"), ""), 402))
	if in.LastError.Code != "insufficient_funds" || *in.CustomerMSISDN != "+253000000002" {
		t.Fatalf("magic 2: %+v", in)
	}
	// bank_a: the magic number is read before +253 is stripped.
	in = decode(t, mustStatus(t, create(e, map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+253000000009"}, ""), 402))
	if in.LastError.Code != "account_not_found" {
		t.Fatalf("bank_a magic 9: %+v", in.LastError)
	}
	r := create(e, walletA("+2530000000010"), "")
	if r.Status != 400 || r.ErrorCode() != "invalid_scenario" || errorParam(r) != "customer_msisdn" {
		t.Fatalf("velocity_limit by number on wallet_a: %d %s", r.Status, r.Body)
	}
	decode(t, mustStatus(t, create(e, walletA("+253000000002"), "success"), 201)) // the header wins
	r = create(e, walletA("+25377123456"), "no_such_scenario")
	if r.Status != 400 || r.ErrorCode() != "invalid_scenario" || errorParam(r) != "X-Service-Scenario" {
		t.Fatalf("unknown scenario: %d %s", r.Status, r.Body)
	}
	if in := decode(t, mustStatus(t, create(e, walletA("+253000000000"), ""), 201)); in.Status != "requires_action" {
		t.Fatalf("+253000000000 is no scenario: %s", in.Status)
	}
}

func testOverrides(t *testing.T, e *apptest.Env) {
	override := func(id, sc string) *apptest.Response {
		return e.Post("/v1/sandbox/overrides", map[string]string{"payment_intent_id": id, "scenario": sc})
	}
	t.Run("confirm follows it", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(50), ""), 201))
		r := override(in.ID, "account_closed")
		if r.Status != 200 || string(r.Body) != `{"payment_intent_id":"`+in.ID+`","scenario":"account_closed","applied":true}`+"\n" {
			t.Fatalf("override: %d %s", r.Status, r.Body)
		}
		got := decode(t, mustStatus(t, confirm(e, in.ID, "123456"), 402))
		if got.Status != "canceled" || got.LastError.Code != "account_not_found" {
			t.Fatalf("confirm after override: %+v", got)
		}
		if r := override(in.ID, "success"); r.Status != 409 || r.ErrorCode() != "invalid_state" {
			t.Fatalf("override of a canceled intent: %d %s", r.Status, r.Body)
		}
	})
	t.Run("partial capture by override", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(1000), ""), 201))
		mustStatus(t, override(in.ID, "partial_capture"), 200)
		got := decode(t, mustStatus(t, confirm(e, in.ID, "123456"), 200))
		if got.AmountCapturedMinor != 800 {
			t.Fatalf("captured %d", got.AmountCapturedMinor)
		}
	})
	t.Run("network timeout on confirm", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(1000), ""), 201))
		mustStatus(t, override(in.ID, "network_timeout"), 200)
		r := confirm(e, in.ID, "123456")
		if r.Status != 504 || r.ErrorCode() != "provider_timeout" || errorField(t, r, "payment_intent") != in.ID {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
		if got := get(t, e, in.ID); got.Status != "canceled" || got.LastError.Code != "provider_timeout" {
			t.Fatalf("after: %+v", got)
		}
	})
	t.Run("page submit follows it", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, map[string]any{"amount": 3, "currency": "USD", "provider": "wallet_a",
			"return_url": "http://merchant.example/return?order=42", "metadata": map[string]string{"wallet_a_mode": "card"}}, ""), 201))
		mustStatus(t, override(in.ID, "card_3ds_required"), 200)
		status, loc, _ := submitPage(t, in.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"}, "exp_month": {"1"}, "exp_year": {"2099"}, "cvc": {"999"}})
		if status != 303 || !strings.HasPrefix(loc, "/sandbox/pay/"+in.ID+"?t=") {
			t.Fatalf("card submit under card_3ds_required: %d %s", status, loc)
		}
		status, loc, _ = submitPage(t, in.NextAction.RedirectURL, url.Values{"outcome": {"fail"}})
		wantReturn(t, status, loc, in.ID)
		got := get(t, e, in.ID)
		if got.Status != "canceled" || got.LastError.Code != "authentication_failed" || !strings.Contains(string(got.PaymentMethodDetails), `"last4":"4242"`) {
			t.Fatalf("after a failed 3-D Secure: %+v %s", got, got.PaymentMethodDetails)
		}
	})
	t.Run("webhook fail by override", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(5), ""), 201))
		mustStatus(t, override(in.ID, "sandbox_webhook_fail"), 200)
		mustStatus(t, confirm(e, in.ID, "123456"), 200)
		var marked int
		e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM sandbox_webhook_fail WHERE object_id = ?", in.ID).Scan(&marked)
		if marked != 1 {
			t.Fatal("the override did not mark the intent's webhooks")
		}
	})
	t.Run("refusals", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(50), ""), 201))
		cases := []struct {
			body   map[string]string
			status int
			code   string
			param  string
		}{
			{map[string]string{"payment_intent_id": in.ID, "scenario": "insufficient_funds"}, 400, "invalid_scenario", "scenario"},
			{map[string]string{"payment_intent_id": in.ID, "scenario": "bogus"}, 400, "invalid_scenario", "scenario"},
			{map[string]string{"payment_intent_id": in.ID}, 400, "parameter_missing", "scenario"},
			{map[string]string{"scenario": "success"}, 400, "parameter_missing", "payment_intent_id"},
			{map[string]string{"payment_intent_id": "pi_unknown", "scenario": "success"}, 404, "resource_missing", "payment_intent_id"},
		}
		for _, c := range cases {
			r := e.Post("/v1/sandbox/overrides", c.body)
			if r.Status != c.status || r.ErrorCode() != c.code || errorParam(r) != c.param {
				t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			}
		}
		if get(t, e, in.ID).Status != "requires_action" {
			t.Fatal("a refused override moved the intent")
		}
	})
}

// TestLiveMode: without a live adapter a live create is 503
// provider_unavailable and writes nothing; sandbox endpoints refuse live keys.
func testLiveMode(t *testing.T, e *apptest.Env) {
	ctx := context.Background()
	mid := e.Merchant.MerchantID
	if err := e.Main.Merchants.SetKYC(ctx, mid, "approved"); err != nil {
		t.Fatal(err)
	}
	if err := e.Main.Merchants.ConnectProvider(ctx, mid, "bank_a", merchants.ProviderConfig{BaseURL: "http://127.0.0.1:9/bank_a", APIKey: "k", CallbackSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	live, err := e.Main.Merchants.CreateKey(ctx, mid, true, "secret")
	if err != nil {
		t.Fatal(err)
	}
	n := count(t, e, "payment_intents")
	// wallet_c is not connected: its live adapter refuses before anything
	// is written (live flows against the simulator: internal/providers/live).
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: live.Secret,
		Body:    map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377000001"},
		Headers: map[string]string{"Idempotency-Key": "live-1", "X-Service-Scenario": "success"}})
	if r.Status != 503 || r.ErrorCode() != "provider_unavailable" {
		t.Fatalf("live create: %d %s", r.Status, r.Body)
	}
	if count(t, e, "payment_intents") != n {
		t.Fatal("a refused live create wrote an intent")
	}
	test := decode(t, mustStatus(t, create(e, bankA(10), ""), 201))
	if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + test.ID, Key: live.Secret}); r.Status != 404 {
		t.Fatalf("a test intent seen with a live key: %d", r.Status)
	}
	r = e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/overrides", Key: live.Secret, Body: map[string]string{"payment_intent_id": test.ID, "scenario": "success"}})
	if r.Status != 403 || r.ErrorCode() != "permission_denied" {
		t.Fatalf("live override: %d %s", r.Status, r.Body)
	}
	e.RequireSecretsAbsent(live.Secret)
}

// TestPushOverrides: an override decides a waiting push approval at once.
// The push delay is an hour here, so only the override can settle them.
func TestPushOverrides(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		override := func(id, sc string) *apptest.Response {
			return e.Post("/v1/sandbox/overrides", map[string]string{"payment_intent_id": id, "scenario": sc})
		}
		cases := []struct {
			body     map[string]any
			scenario string
			status   string
			code     string
		}{
			{map[string]any{"amount": 5, "currency": "DJF", "provider": "wallet_a", "customer_msisdn": "+25377000011"}, "kyc_blocked", "compliance_review", ""},
			{map[string]any{"amount": 5, "currency": "DJF", "provider": "wallet_a", "customer_msisdn": "+25377000012"}, "insufficient_funds", "canceled", "insufficient_funds"},
			{map[string]any{"amount": 5, "currency": "DJF", "provider": "wallet_a", "customer_msisdn": "+25377000013"}, "otp_expired", "canceled", "otp_expired"},
			{map[string]any{"amount": 5, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377000014"}, "success", "succeeded", ""},
			{map[string]any{"amount": 5, "currency": "ETB", "provider": "wallet_d", "customer_msisdn": "+251911000015",
				"metadata": map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "ebirr"}}, "network_timeout", "canceled", "provider_timeout"},
		}
		for _, c := range cases {
			in := decode(t, mustStatus(t, create(e, c.body, ""), 201))
			if in.NextAction == nil || in.NextAction.Type != "push_approval" {
				t.Fatalf("%+v", in)
			}
			mustStatus(t, override(in.ID, c.scenario), 200)
			got := waitStatus(t, e, in.ID)
			if got.Status != c.status || (c.code != "" && (got.LastError == nil || got.LastError.Code != c.code)) {
				t.Fatalf("%s: %+v", c.scenario, got)
			}
		}
		// Without an override nothing moves before the delay.
		in := decode(t, mustStatus(t, create(e, cases[0].body, ""), 201))
		if got := get(t, e, in.ID); got.Status != "requires_action" {
			t.Fatalf("a push intent moved early: %s", got.Status)
		}
		verifyLedger(t, e)
	}, func(c *app.Config) { c.SandboxPushDelay = time.Hour; c.SandboxTimeoutDelay = 10 * time.Millisecond })
}

// TestTimeoutReplayDoesNotWait: a create under the sandbox's network_timeout
// waits the scenario's delay and answers 504 provider_timeout, stored under
// its Idempotency-Key; a retry with the key answers that stored answer
// without waiting the delay again, on both engines (on PostgreSQL, where the
// retry's run does not read its key first, the sandbox reads it before it
// waits). The delay is long enough here that a retry which waited would
// take it again.
func TestTimeoutReplayDoesNotWait(t *testing.T) {
	const delay = 1500 * time.Millisecond
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		post := func() (*apptest.Response, time.Duration) {
			start := time.Now()
			r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK,
				Body:    map[string]any{"amount": 700, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"},
				Headers: map[string]string{"Idempotency-Key": "timeout-replay", "X-Service-Scenario": "network_timeout"}})
			return r, time.Since(start)
		}
		first, took := post()
		if first.Status != 504 || first.ErrorCode() != "provider_timeout" || took < delay {
			t.Fatalf("first: %d %s after %v; want 504 provider_timeout after the %v delay", first.Status, first.Body, took, delay)
		}
		again, took := post()
		if again.Status != 504 || again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
			t.Fatalf("retry: %d (replayed %q) %s; want the first answer replayed", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
		}
		if took >= delay {
			t.Fatalf("the retry took %v: it waited the scenario's delay (%v) again", took, delay)
		}
		var n int
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ?", e.Merchant.MerchantID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%d intents under one key, want 1", n)
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	}, func(c *app.Config) { c.SandboxTimeoutDelay = delay })
}
