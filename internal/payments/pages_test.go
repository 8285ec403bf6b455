package payments_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/payments"
)

func cardIntent(t *testing.T, e *apptest.Env) intent {
	t.Helper()
	return decode(t, mustStatus(t, create(e, map[string]any{"amount": 20, "currency": "USD", "provider": "wallet_a",
		"return_url": "http://merchant.example/return?order=42", "metadata": map[string]string{"wallet_a_mode": "card"}}, ""), 201))
}

func testHostedPages(t *testing.T, e *apptest.Env) {
	t.Run("tokens", func(t *testing.T) {
		a, b := cardIntent(t, e), cardIntent(t, e)
		ua, _ := url.Parse(a.NextAction.RedirectURL)
		ub, _ := url.Parse(b.NextAction.RedirectURL)
		if code, body := getPage(t, a.NextAction.RedirectURL); code != 200 || !strings.Contains(body, `name="card_number"`) {
			t.Fatalf("own page: %d", code)
		}
		bad := []string{
			e.URL + ua.Path,                               // no token
			e.URL + ua.Path + "?t=",                       // empty token
			e.URL + ua.Path + "?t=" + ub.Query().Get("t"), // another intent's token
			e.URL + ua.Path + "?t=" + ua.Query().Get("t") + "x",
			e.URL + "/sandbox/pay/pi_nope?t=" + ua.Query().Get("t"),
		}
		for _, u := range bad {
			if code, body := getPage(t, u); code != 404 || !strings.Contains(body, "does not exist") {
				t.Errorf("GET %s: %d", u, code)
			}
			if code, _, _ := submitPage(t, u, url.Values{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}}); code != 404 {
				t.Errorf("POST %s: %d", u, code)
			}
		}
		if get(t, e, a.ID).Status != "requires_action" || get(t, e, b.ID).Status != "requires_action" {
			t.Fatal("a page request with a wrong token moved an intent")
		}
		bank := decode(t, mustStatus(t, create(e, bankA(1), ""), 201))
		if code, _ := getPage(t, e.URL+"/sandbox/pay/"+bank.ID+"?t="+ua.Query().Get("t")); code != 404 {
			t.Fatalf("an OTP intent has no page: %d", code)
		}
	})
	t.Run("declined card", func(t *testing.T) {
		in := cardIntent(t, e)
		declined := url.Values{"card_number": {"4000 0000 0000 0002"}, "exp_month": {"12"}, "exp_year": {"40"}, "cvc": {"123"}}
		// The customer may try other cards: each decline but the last
		// sends them back to the card page, the intent still waiting.
		for i := 1; i < payments.MaxCardAttempts; i++ {
			status, loc, _ := submitPage(t, in.NextAction.RedirectURL, declined)
			if status != 303 || !strings.HasPrefix(loc, "/sandbox/pay/"+in.ID) {
				t.Fatalf("decline %d: %d to %s, want the card page again", i, status, loc)
			}
			if got := get(t, e, in.ID); got.Status != "requires_action" || got.LastError == nil || got.LastError.Code != "card_declined" {
				t.Fatalf("after decline %d: %+v", i, got)
			}
		}
		status, loc, _ := submitPage(t, in.NextAction.RedirectURL, declined)
		wantReturn(t, status, loc, in.ID)
		got := get(t, e, in.ID)
		if got.Status != "canceled" || got.LastError.Code != "card_declined" || got.LastError.DeclineCode != "generic_decline" {
			t.Fatalf("%+v", got)
		}
		if !strings.Contains(string(got.PaymentMethodDetails), `"last4":"0002"`) {
			t.Fatalf("details %s", got.PaymentMethodDetails)
		}
		// The page of a settled intent says so and links back.
		code, body := getPage(t, in.NextAction.RedirectURL)
		if code != 200 || !strings.Contains(body, "payment_intent="+in.ID) || !strings.Contains(body, "canceled") {
			t.Fatalf("settled page: %d %s", code, body)
		}
		// A late submit does not move it again.
		status, loc, _ = submitPage(t, in.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
		wantReturn(t, status, loc, in.ID)
		if got := get(t, e, in.ID); got.Status != "canceled" {
			t.Fatalf("late submit moved it to %s", got.Status)
		}
	})
	t.Run("malformed forms", func(t *testing.T) {
		in := cardIntent(t, e)
		forms := []url.Values{
			{"card_number": {"4242424242424241"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}}, // Luhn
			{"card_number": {"4242424242424242"}, "exp_month": {"13"}, "exp_year": {"2040"}, "cvc": {"123"}},
			{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2001"}, "cvc": {"123"}},
			{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"12"}},
			{"outcome": {"complete"}}, // the 3-D Secure answer on the card step
		}
		for _, f := range forms {
			code, _, body := submitPage(t, in.NextAction.RedirectURL, f)
			if code != 400 || !strings.Contains(body, `role="alert"`) || strings.Contains(body, "4242424242424242") || strings.Contains(body, "4242424242424241") {
				t.Errorf("%v: %d", f, code)
			}
		}
		hpp := decode(t, mustStatus(t, create(e, map[string]any{"amount": 1, "currency": "DJF", "provider": "wallet_a",
			"return_url": "http://merchant.example/return?order=42", "metadata": map[string]string{"wallet_a_mode": "hpp"}}, ""), 201))
		for _, f := range []url.Values{{"phone": {"+25377123456"}, "pin": {"909"}}, {"phone": {"+25377123456"}, "pin": {"9090909"}},
			{"phone": {"abc"}, "pin": {"8080"}}, {"pin": {"8080"}}} {
			if code, _, body := submitPage(t, hpp.NextAction.RedirectURL, f); code != 400 || strings.Contains(withoutPageIDs(body, hpp.NextAction.RedirectURL), f.Get("pin")) {
				t.Errorf("%v: %d", f, code)
			}
		}
		if get(t, e, in.ID).Status != "requires_action" || get(t, e, hpp.ID).Status != "requires_action" {
			t.Fatal("a malformed form moved an intent")
		}
		status, loc, _ := submitPage(t, hpp.NextAction.RedirectURL, url.Values{"phone": {"77 12 34 56"}, "pin": {"987654"}})
		wantReturn(t, status, loc, hpp.ID)
	})
	t.Run("card data never stored or logged", func(t *testing.T) {
		in := cardIntent(t, e)
		status, loc, _ := submitPage(t, in.NextAction.RedirectURL, url.Values{"card_number": {"4000000000003220"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"737"}})
		if status != 303 || !strings.HasPrefix(loc, "/sandbox/pay/"+in.ID) {
			t.Fatalf("3-D Secure card: %d %s", status, loc)
		}
		code, body := getPage(t, e.URL+loc)
		if code != 200 || !strings.Contains(body, `value="complete"`) || !strings.Contains(body, `value="fail"`) {
			t.Fatalf("3-D Secure page: %d", code)
		}
		status, loc, _ = submitPage(t, e.URL+loc, url.Values{"outcome": {"complete"}})
		wantReturn(t, status, loc, in.ID)
		got := get(t, e, in.ID)
		if got.Status != "succeeded" || !strings.Contains(string(got.PaymentMethodDetails), `"last4":"3220"`) {
			t.Fatalf("%+v %s", got, got.PaymentMethodDetails)
		}
		for _, q := range []string{
			"SELECT COALESCE(payment_method_details,'') || COALESCE(metadata,'') || COALESCE(last_error,'') || COALESCE(next_action,'') FROM payment_intents",
			"SELECT data FROM events", "SELECT body FROM idempotency_keys WHERE body IS NOT NULL", "SELECT payload FROM jobs"} {
			if rowsContain(t, e, q, "4000000000003220") {
				t.Errorf("card data stored: %s", q)
			}
		}
		e.RequireSecretsAbsent("4000000000003220", "4000 0000 0000 3220", "987654", `"737"`)
	})
	t.Run("headers", func(t *testing.T) {
		in := cardIntent(t, e)
		resp, err := noRedirects.Get(in.NextAction.RedirectURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("headers %v", h)
		}
	})
}

// rowsContain reports whether any value the query selects holds one of needles.
func rowsContain(t *testing.T, e *apptest.Env, q string, needles ...string) bool {
	t.Helper()
	rows, err := e.Main.DB.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		for _, n := range needles {
			if strings.Contains(string(b), n) {
				return true
			}
		}
	}
	return false
}
