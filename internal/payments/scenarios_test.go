package payments_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
)

// flowMode is one column of the matrix: a provider in one of its modes.
type flowMode struct {
	name     string
	body     map[string]any
	currency string
	amount   int64  // minor units the body asks for
	next     string // the next_action type of the normal flow
	drive    string // how the normal flow completes: otp, hpp, card, picker, push
}

func modes() []flowMode {
	ret := "http://merchant.example/return?order=42"
	return []flowMode{
		{"bank_a", map[string]any{"amount": 1001, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377123456"}, "DJF", 1001, "collect_otp", "otp"},
		{"bank_b", map[string]any{"amount": 2000, "currency": "DJF", "provider": "bank_b", "customer_msisdn": "77123456"}, "DJF", 2000, "collect_otp", "otp"},
		{"wallet_a_hpp", map[string]any{"amount": 12, "currency": "USD", "provider": "wallet_a", "return_url": ret,
			"metadata": map[string]string{"wallet_a_mode": "hpp"}}, "USD", 1200, "redirect", "hpp"},
		{"wallet_a_card", map[string]any{"amount_minor": 1234, "currency": "USD", "provider": "wallet_a", "return_url": ret,
			"metadata": map[string]string{"wallet_a_mode": "card"}}, "USD", 1234, "redirect", "card"},
		{"wallet_a_push", map[string]any{"amount": 500, "currency": "DJF", "provider": "wallet_a", "customer_msisdn": "+25377000001"}, "DJF", 500, "push_approval", "push"},
		{"wallet_c_app", map[string]any{"amount": 700, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377000002",
			"metadata": map[string]string{"auth_mode": "APP"}}, "DJF", 700, "push_approval", "push"},
		{"wallet_c_otp", map[string]any{"amount": 3, "currency": "USD", "provider": "wallet_c", "customer_msisdn": "+25377000003",
			"metadata": map[string]string{"auth_mode": "OTP"}}, "USD", 300, "collect_otp", "otp"},
		{"wallet_d_redirect", map[string]any{"amount": 25, "currency": "ETB", "provider": "wallet_d", "return_url": ret}, "ETB", 2500, "redirect", "picker"},
		{"wallet_d_direct_push", map[string]any{"amount": 30, "currency": "ETB", "provider": "wallet_d", "customer_msisdn": "+251911234567",
			"metadata": map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "telebirr"}}, "ETB", 3000, "push_approval", "push"},
		{"wallet_d_direct_otp", map[string]any{"amount": 40, "currency": "ETB", "provider": "wallet_d", "customer_msisdn": "+251911234568",
			"metadata": map[string]string{"wallet_d_mode": "direct", "wallet_d_payment_method": "amole"}}, "ETB", 4000, "collect_otp", "otp"},
	}
}

// offered is the scenarios' applicability table written out per mode (card
// payments are the card_gateway_cnp rail; wallet_b takes no payments).
var offered = map[string][]string{
	"success":              {"*"},
	"network_timeout":      {"*"},
	"kyc_blocked":          {"*"},
	"sandbox_webhook_fail": {"*"},
	"insufficient_funds":   {"wallet_a_hpp", "wallet_a_push"},
	"otp_expired":          {"wallet_a_hpp", "wallet_a_push"},
	"duplicate_msisdn":     {"wallet_a_hpp", "wallet_a_push"},
	"card_declined":        {"wallet_a_card"},
	"card_3ds_required":    {"wallet_a_card"},
	"account_closed":       {"bank_a", "bank_b"},
	"partial_capture":      {"bank_a"},
	"velocity_limit":       {},
}

func isOffered(scenario, mode string) bool {
	for _, m := range offered[scenario] {
		if m == "*" || m == mode {
			return true
		}
	}
	return false
}

// refusals are the scenarios that cancel at create with 402, and the code.
var refusals = map[string]string{
	"insufficient_funds": "insufficient_funds",
	"duplicate_msisdn":   "wallet_locked",
	"account_closed":     "account_not_found",
	"card_declined":      "card_declined",
}

func fastSandbox(c *app.Config) {
	c.SandboxPushDelay = 30 * time.Millisecond
	c.SandboxTimeoutDelay = 30 * time.Millisecond
}

// TestScenarioMatrix drives every provider × mode × scenario cell (and the
// cell without a scenario) through create and, where the intent waits, its
// next step, checking the status, HTTP code, next_action, last_error, the
// ledger and the outbox.
func testScenarioMatrix(t *testing.T, e *apptest.Env) {
	scenarios := []string{"", "success", "insufficient_funds", "otp_expired", "card_declined", "card_3ds_required", "network_timeout",
		"duplicate_msisdn", "kyc_blocked", "account_closed", "velocity_limit", "partial_capture", "sandbox_webhook_fail"}
	credited := map[string]int64{}
	start := map[string]int64{}
	for _, cur := range []string{"DJF", "USD", "ETB"} {
		start[cur] = available(t, e, cur)
	}
	for _, m := range modes() {
		for _, sc := range scenarios {
			name := sc
			if name == "" {
				name = "none"
			}
			t.Run(m.name+"/"+name, func(t *testing.T) {
				runCell(t, e, m, sc, credited)
			})
		}
	}
	for cur, want := range credited {
		if got := available(t, e, cur) - start[cur]; got != want {
			t.Errorf("available %s = %d, want %d", cur, got, want)
		}
	}
	verifyLedger(t, e)
}

func runCell(t *testing.T, e *apptest.Env, m flowMode, sc string, credited map[string]int64) {
	before := available(t, e, m.currency)
	intents, evs := count(t, e, "payment_intents"), count(t, e, "events")
	r := create(e, m.body, sc)
	if sc != "" && !isOffered(sc, m.name) {
		if r.Status != 400 || r.ErrorCode() != "invalid_scenario" || errorParam(r) != "X-Service-Scenario" {
			t.Fatalf("not offered: got %d %s", r.Status, r.Body)
		}
		if count(t, e, "payment_intents") != intents || count(t, e, "events") != evs {
			t.Fatal("a refused scenario wrote something")
		}
		return
	}
	var in intent
	captured := int64(0)
	wantEvents := []string{"payment_intent.created"}
	switch {
	case sc == "success":
		in = expect(t, r, 201, "succeeded")
		captured = m.amount
		wantEvents = append(wantEvents, "payment_intent.succeeded")
	case refusals[sc] != "":
		in = expect(t, r, 402, "canceled")
		if in.LastError == nil || in.LastError.Code != refusals[sc] || in.LastError.Message == "" || in.LastError.Provider != m.body["provider"] {
			t.Fatalf("last_error %+v", in.LastError)
		}
		if sc == "card_declined" && in.LastError.DeclineCode != "generic_decline" {
			t.Fatalf("decline_code %q", in.LastError.DeclineCode)
		}
		wantEvents = append(wantEvents, "payment_intent.canceled")
	case sc == "network_timeout":
		if r.Status != 504 || r.ErrorCode() != "provider_timeout" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		id, _ := errorField(t, r, "payment_intent").(string)
		in = get(t, e, id)
		if in.Status != "canceled" || in.LastError == nil || in.LastError.Code != "provider_timeout" {
			t.Fatalf("after timeout: %+v", in)
		}
		wantEvents = append(wantEvents, "payment_intent.canceled")
	case sc == "kyc_blocked":
		in = expect(t, r, 201, "compliance_review")
		wantEvents = append(wantEvents, "payment_intent.compliance_review")
	case sc == "otp_expired":
		in = expect(t, r, 201, "requires_action")
		if in.NextAction == nil || in.NextAction.Type != "collect_otp" {
			t.Fatalf("next_action %+v", in.NextAction)
		}
		c := confirm(e, in.ID, "123456")
		if c.Status != 400 || c.ErrorCode() != "otp_expired" {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
		in = get(t, e, in.ID)
		if in.Status != "canceled" || in.LastError == nil || in.LastError.Code != "otp_expired" {
			t.Fatalf("after otp_expired: %+v", in)
		}
		wantEvents = append(wantEvents, "payment_intent.canceled")
	case sc == "card_3ds_required":
		in = expect(t, r, 201, "requires_action")
		if in.NextAction == nil || in.NextAction.Type != "redirect_to_url" || !strings.HasPrefix(in.NextAction.RedirectURL, e.URL+"/sandbox/pay/"+in.ID+"?t=") {
			t.Fatalf("next_action %+v", in.NextAction)
		}
		code, body := getPage(t, in.NextAction.RedirectURL)
		if code != 200 || !strings.Contains(body, `name="outcome" value="complete"`) {
			t.Fatalf("3-D Secure page: %d %s", code, body)
		}
		status, loc, _ := submitPage(t, in.NextAction.RedirectURL, url.Values{"outcome": {"complete"}})
		wantReturn(t, status, loc, in.ID)
		in = get(t, e, in.ID)
		if in.Status != "succeeded" {
			t.Fatalf("after 3-D Secure: %s", in.Status)
		}
		captured = m.amount
		wantEvents = append(wantEvents, "payment_intent.succeeded")
	case sc == "partial_capture":
		in = expect(t, r, 201, "requires_action")
		c := confirm(e, in.ID, "123456")
		in = expect(t, c, 200, "succeeded")
		captured = m.amount * 80 / 100
		if in.AmountCapturedMinor != captured {
			t.Fatalf("captured %d of %d", in.AmountCapturedMinor, m.amount)
		}
		wantEvents = append(wantEvents, "payment_intent.succeeded")
	default: // no scenario, or sandbox_webhook_fail: the normal flow
		in = expect(t, r, 201, "requires_action")
		if in.NextAction == nil || in.NextAction.Type != m.next {
			t.Fatalf("next_action %+v, want %s", in.NextAction, m.next)
		}
		in = drive(t, e, m, in)
		if in.Status != "succeeded" || in.AmountCapturedMinor != m.amount || in.SucceededAt == nil || in.NextAction != nil {
			t.Fatalf("after the flow: %+v", in)
		}
		captured = m.amount
		wantEvents = append(wantEvents, "payment_intent.succeeded")
		marked, err := events.WebhookFailMarked(context.Background(), e.Main.DB, in.ID)
		if err != nil || marked != (sc == "sandbox_webhook_fail") {
			t.Fatalf("webhook-fail marker %v %v", marked, err)
		}
	}
	if in.AmountMinor != m.amount || in.Currency != m.currency {
		t.Fatalf("amount %d %s, want %d %s", in.AmountMinor, in.Currency, m.amount, m.currency)
	}
	if got := eventTypes(t, e, in.ID); joined(got) != joined(wantEvents) {
		t.Fatalf("events %v, want %v", got, wantEvents)
	}
	if got := creditedTo(t, e, in.ID); got != captured {
		t.Fatalf("available credited %d, want %d", got, captured)
	}
	if got := available(t, e, m.currency) - before; got < captured {
		t.Fatalf("available moved by %d, want at least %d", got, captured)
	}
	credited[m.currency] += captured
}

func expect(t *testing.T, r *apptest.Response, status int, state string) intent {
	t.Helper()
	if r.Status != status {
		t.Fatalf("HTTP %d, want %d: %s", r.Status, status, r.Body)
	}
	in := decode(t, r)
	if in.Status != state {
		t.Fatalf("status %s, want %s: %s", in.Status, state, r.Body)
	}
	if state != "requires_action" && in.NextAction != nil {
		t.Fatalf("%s intent has next_action %+v", state, in.NextAction)
	}
	if (state == "canceled") != (in.LastError != nil) {
		t.Fatalf("%s intent with last_error %+v", state, in.LastError)
	}
	return in
}

// drive completes the normal flow of m the way a customer would.
func drive(t *testing.T, e *apptest.Env, m flowMode, in intent) intent {
	t.Helper()
	page := func(form url.Values) intent {
		if !strings.HasPrefix(in.NextAction.RedirectURL, e.URL+"/sandbox/pay/"+in.ID+"?t=") {
			t.Fatalf("redirect_url %s", in.NextAction.RedirectURL)
		}
		status, loc, body := submitPage(t, in.NextAction.RedirectURL, form)
		if status != 303 {
			t.Fatalf("page submit: %d %s", status, body)
		}
		wantReturn(t, status, loc, in.ID)
		return get(t, e, in.ID)
	}
	switch m.drive {
	case "otp":
		if in.NextAction.OTPLength != 6 {
			t.Fatalf("otp_length %d", in.NextAction.OTPLength)
		}
		return decode(t, mustStatus(t, confirm(e, in.ID, "123456"), 200))
	case "hpp":
		return page(url.Values{"phone": {"+25377123456"}, "pin": {"1234"}})
	case "card":
		out := page(url.Values{"card_number": {"4242 4242 4242 4242"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
		if !strings.Contains(string(out.PaymentMethodDetails), `"last4":"4242"`) || !strings.Contains(string(out.PaymentMethodDetails), `"brand":"visa"`) {
			t.Fatalf("payment_method_details %s", out.PaymentMethodDetails)
		}
		return out
	case "picker":
		return page(url.Values{"method": {"telebirr"}})
	case "push":
		return waitStatus(t, e, in.ID)
	}
	t.Fatalf("unknown drive %s", m.drive)
	return in
}

func wantReturn(t *testing.T, status int, loc, id string) {
	t.Helper()
	if status != 303 || loc != "http://merchant.example/return?order=42&payment_intent="+id {
		t.Fatalf("page answered %d to %q", status, loc)
	}
}

func mustStatus(t *testing.T, r *apptest.Response, status int) *apptest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("HTTP %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}
