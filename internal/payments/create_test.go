package payments_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// TestCreateRefusesBadInput: each bad request is a 400 naming the field,
// and nothing is written (no intent, no event, no ledger entry).
func testCreateRefusesBadInput(t *testing.T, e *apptest.Env) {
	ret := "https://merchant.example/back"
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
			} else {
				out[kv[i].(string)] = kv[i+1]
			}
		}
		return out
	}
	ok := map[string]any{"amount": 100, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}
	card := map[string]any{"amount": 1, "currency": "USD", "provider": "wallet_a", "return_url": ret, "metadata": map[string]string{"wallet_a_mode": "card"}}
	wd := map[string]any{"amount": 1, "currency": "ETB", "provider": "wallet_d", "return_url": ret}
	cases := []struct {
		name  string
		body  any
		param string
		code  string
	}{
		{"no amount", with(ok, "amount", nil), "amount", "parameter_missing"},
		{"no currency", with(ok, "currency", nil), "currency", "parameter_missing"},
		{"no provider", with(ok, "provider", nil), "provider", "parameter_missing"},
		{"amount and amount_minor", with(ok, "amount_minor", 100), "amount", "parameter_invalid"},
		{"amount zero", with(ok, "amount", 0), "amount", "amount_invalid"},
		{"amount negative", with(ok, "amount", -5), "amount", "amount_invalid"},
		{"amount_minor zero", with(ok, "amount", nil, "amount_minor", 0), "amount_minor", "amount_invalid"},
		{"amount fractional", with(ok, "amount", 10.5), "amount", "parameter_invalid"},
		{"amount a string", with(ok, "amount", "100"), "amount", "parameter_invalid"},
		{"amount beyond int64", `{"amount":9223372036854775808,"currency":"DJF","provider":"bank_a","customer_msisdn":"77123456"}`, "amount", "parameter_invalid"},
		{"amount overflows in minor units", with(ok, "currency", "USD", "amount", int64(92233720368547759)), "amount", "amount_too_large"},
		{"unknown currency", with(ok, "currency", "XYZ"), "currency", "currency_invalid"},
		{"lower-case currency", with(ok, "currency", "djf"), "currency", "currency_invalid"},
		{"ETB on bank_a", with(ok, "currency", "ETB"), "currency", "currency_not_supported"},
		{"EUR on wallet_c", map[string]any{"amount": 1, "currency": "EUR", "provider": "wallet_c", "customer_msisdn": "+25377123456"}, "currency", "currency_not_supported"},
		{"DJF on wallet_d", with(wd, "currency", "DJF"), "currency", "currency_not_supported"},
		{"USD on wallet_d", with(wd, "currency", "USD"), "currency", "currency_not_supported"},
		{"unknown provider", with(ok, "provider", "bank_z"), "provider", "parameter_invalid"},
		{"wallet_b", with(ok, "provider", "wallet_b"), "provider", "parameter_invalid"},
		{"card_gateway_cnp as provider", with(ok, "provider", "card_gateway_cnp"), "provider", "parameter_invalid"},
		{"bank_a without a number", with(ok, "customer_msisdn", nil), "customer_msisdn", "parameter_missing"},
		{"bank_a foreign E.164", with(ok, "customer_msisdn", "+251911234567"), "customer_msisdn", "parameter_invalid"},
		{"bank_a malformed", with(ok, "customer_msisdn", "77-12-34-56"), "customer_msisdn", "parameter_invalid"},
		{"bank_a too short", with(ok, "customer_msisdn", "1234"), "customer_msisdn", "parameter_invalid"},
		{"bank_a plus and letters", with(ok, "customer_msisdn", "+253ABCDEFGH"), "customer_msisdn", "parameter_invalid"},
		{"wallet_c bare number", map[string]any{"amount": 1, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "77123456"}, "customer_msisdn", "parameter_invalid"},
		{"wallet_c without a number", map[string]any{"amount": 1, "currency": "DJF", "provider": "wallet_c"}, "customer_msisdn", "parameter_missing"},
		{"wallet_a push without a number", map[string]any{"amount": 1, "currency": "DJF", "provider": "wallet_a"}, "customer_msisdn", "parameter_missing"},
		{"card without return_url", with(card, "return_url", nil), "return_url", "parameter_missing"},
		{"hpp without return_url", with(card, "return_url", nil, "metadata", map[string]string{"wallet_a_mode": "hpp"}), "return_url", "parameter_missing"},
		{"wallet_d without return_url", with(wd, "return_url", nil), "return_url", "parameter_missing"},
		{"relative return_url", with(card, "return_url", "/back"), "return_url", "parameter_invalid"},
		{"javascript return_url", with(card, "return_url", "javascript:alert(1)"), "return_url", "parameter_invalid"},
		{"bad wallet_a_mode", with(card, "metadata", map[string]string{"wallet_a_mode": "qr"}), "metadata.wallet_a_mode", "parameter_invalid"},
		{"bad auth_mode", map[string]any{"amount": 1, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377123456", "metadata": map[string]string{"auth_mode": "SMS"}}, "metadata.auth_mode", "parameter_invalid"},
		{"bad wallet_d_payment_method", with(wd, "metadata", map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "paypal"}), "metadata.wallet_d_payment_method", "parameter_invalid"},
		{"direct without a method", with(wd, "metadata", map[string]string{"wallet_d_mode": "direct"}), "metadata.wallet_d_payment_method", "parameter_missing"},
		{"bad wallet_d_mode", with(wd, "metadata", map[string]string{"wallet_d_mode": "hosted"}), "metadata.wallet_d_mode", "parameter_invalid"},
		{"metadata not strings", with(ok, "metadata", map[string]any{"n": 1}), "metadata", "parameter_invalid"},
		{"unknown field", with(ok, "amount_major", 1), "amount_major", "parameter_unknown"},
		{"description too long", with(ok, "description", strings.Repeat("x", 1001)), "description", "parameter_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			intents, evs, entries := count(t, e, "payment_intents"), count(t, e, "events"), count(t, e, "ledger_entries")
			var r *apptest.Response
			if s, isString := c.body.(string); isString {
				r = e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Body: s, Headers: map[string]string{"Idempotency-Key": "raw-" + c.name}})
			} else {
				r = create(e, c.body.(map[string]any), "")
			}
			if r.Status != 400 || errorParam(r) != c.param || r.ErrorCode() != c.code {
				t.Fatalf("got %d %s, want 400 %s naming %s", r.Status, r.Body, c.code, c.param)
			}
			if count(t, e, "payment_intents") != intents || count(t, e, "events") != evs || count(t, e, "ledger_entries") != entries {
				t.Fatal("a refused request wrote something")
			}
		})
	}
	t.Run("no idempotency key", func(t *testing.T) {
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Body: ok})
		if r.Status != 400 || r.ErrorCode() != "idempotency_key_required" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

// TestCreateAccepts covers the accepted forms: bank_a's E.164 and bare
// numbers (the provider gets the bare one), amount_minor, and a replay.
func testCreateAccepts(t *testing.T, e *apptest.Env) {
	for _, n := range []string{"+25377123456", "77123456"} {
		in := decode(t, mustStatus(t, create(e, map[string]any{"amount": 100, "currency": "DJF", "provider": "bank_a", "customer_msisdn": n}, ""), 201))
		if *in.CustomerMSISDN != n {
			t.Fatalf("customer_msisdn %q stored as %q", n, *in.CustomerMSISDN)
		}
	}
	in := decode(t, mustStatus(t, create(e, map[string]any{"amount_minor": 1999, "currency": "USD", "provider": "bank_b", "customer_msisdn": "+25377123456",
		"description": "Order 42", "metadata": map[string]string{"order": "42"}}, ""), 201))
	if in.AmountMinor != 1999 || in.Metadata["order"] != "42" {
		t.Fatalf("%+v", in)
	}
	if in := decode(t, mustStatus(t, create(e, map[string]any{"amount": 7, "currency": "USD", "provider": "wallet_a", "customer_msisdn": "+25377123456"}, ""), 201)); in.AmountMinor != 700 {
		t.Fatalf("7 USD is %d minor", in.AmountMinor)
	}
	req := apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Body: bankA(5), Headers: map[string]string{"Idempotency-Key": "replay-me"}}
	first, second := e.Do(req), e.Do(req)
	if first.Status != 201 || second.Status != 201 || string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %d", first.Status, second.Status)
	}
}

func testListAndIsolation(t *testing.T, shared *apptest.Env) {
	// A merchant of its own, so the lists hold only this test's intents.
	m, err := shared.Main.Merchants.Create(t.Context(), merchantParams("Lister"))
	if err != nil {
		t.Fatal(err)
	}
	own := *shared
	own.SK, own.Merchant = m.SecretKeys[0], m
	e := &own
	a := decode(t, mustStatus(t, create(e, bankA(1), ""), 201))
	b := decode(t, mustStatus(t, create(e, bankA(2), "success"), 201))
	c := decode(t, mustStatus(t, create(e, map[string]any{"amount": 1, "currency": "ETB", "provider": "wallet_d", "return_url": "http://x.example/"}, ""), 201))
	list := func(q string) []string {
		r := e.Get("/v1/payment_intents" + q)
		if r.Status != 200 {
			t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
		}
		var l struct {
			Data    []intent `json:"data"`
			HasMore bool     `json:"has_more"`
		}
		r.JSON(t, &l)
		var ids []string
		for _, in := range l.Data {
			ids = append(ids, in.ID)
		}
		return ids
	}
	want := func(got []string, ids ...string) {
		t.Helper()
		if joined(got) != joined(ids) {
			t.Fatalf("got %v, want %v", got, ids)
		}
	}
	want(list(""), c.ID, b.ID, a.ID)
	want(list("?status=succeeded"), b.ID)
	want(list("?provider=wallet_d"), c.ID)
	want(list("?limit=1&starting_after="+c.ID), b.ID)
	want(list("?ending_before="+a.ID), c.ID, b.ID)
	now := time.Now().UTC()
	want(list("?created[gte]="+url.QueryEscape(now.Add(-time.Minute).Format(time.RFC3339))), c.ID, b.ID, a.ID)
	want(list("?created[lte]=" + now.Add(-time.Minute).Format("2006-01-02T15:04:05Z")))
	want(list("?created[gte]=" + itoa(now.Add(time.Minute).Unix())))
	want(list("?created[lte]="+itoa(now.Add(time.Minute).Unix())+"&provider=bank_a"), b.ID, a.ID)
	for _, q := range []string{"?status=paid", "?provider=wallet_b", "?created[gte]=yesterday", "?created[lte]=2026-13-01T00:00:00Z", "?limit=101"} {
		if r := e.Get("/v1/payment_intents" + q); r.Status != 400 || errorParam(r) == "" {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	// Another merchant sees none of them.
	o, err := e.Main.Merchants.Create(t.Context(), merchantParams("Other"))
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + a.ID, Key: o.SecretKeys[0]}); r.Status != 404 {
		t.Fatalf("another merchant's intent: %d", r.Status)
	}
	r := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents", Key: o.SecretKeys[0]})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"data":[]`) {
		t.Fatalf("another merchant's list: %s", r.Body)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + a.ID + "/confirm", Key: o.SecretKeys[0], Body: map[string]string{"otp": "123456"}}); r.Status != 404 {
		t.Fatalf("confirm of another merchant's intent: %d", r.Status)
	}
}
