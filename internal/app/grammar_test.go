package app_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/app/apptest"
)

// rfc3339ish matches a string that is a timestamp of any precision.
var rfc3339ish = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}`)

// wireTimestamp is the one form payd gives a timestamp.
var wireTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)

// deprecatedMoney lists the money fields kept under their old names for API
// version 2026-11-29, by the object that carries them, with the name that
// replaces each.
var deprecatedMoney = map[string]map[string]string{
	"payout":  {"amount": "amount_minor"},
	"invoice": {"amount_due": "amount_due_minor", "amount_paid": "amount_paid_minor", "amount_remaining": "amount_remaining_minor"},
	"balance": {"available": "available_minor", "reserved": "reserved_minor", "pending": "pending_minor"},
}

// moneyWord says whether a key of an object of kind names an amount of
// money (counts such as row_count, attempt_count or a batch's pending and
// rows_pending are not money).
func moneyWord(kind, k string) bool {
	if kind == "payout_batch" && (k == "pending" || k == "rows_pending") {
		return false
	}
	for _, w := range []string{"amount", "total", "available", "reserved", "pending", "gross", "net", "refunds", "balance_after", "threshold"} {
		if k == w || strings.HasPrefix(k, w+"_") || strings.HasSuffix(k, "_"+w) || strings.Contains(k, "_"+w+"_") {
			return true
		}
	}
	return false
}

// walkGrammar checks one JSON value: every timestamp has the wire form,
// and every integer money field is named *_minor, or is a deprecated name
// that has its *_minor twin with the same value beside it. kind is the
// object type of the enclosing object ("" when unknown).
func walkGrammar(t *testing.T, where, kind string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if o, ok := x["object"].(string); ok {
			kind = o
		}
		if _, ok := x["available_minor"]; ok && kind != "balance" {
			kind = "balance" // an entry of balances[]
		}
		for k, val := range x {
			at := where + "." + k
			if k == "metadata" {
				continue // the merchant's own strings
			}
			if s, ok := val.(string); ok && rfc3339ish.MatchString(s) && !wireTimestamp.MatchString(s) {
				t.Errorf("%s = %q: a timestamp not in whole seconds UTC", at, s)
			}
			if n, ok := val.(json.Number); ok && moneyWord(kind, k) && !strings.HasSuffix(k, "_minor") && !strings.HasSuffix(k, "_count") {
				repl, dep := deprecatedMoney[kind][k]
				if !dep {
					t.Errorf("%s (%s): money named without _minor", at, kind)
				} else if twin, ok := x[repl].(json.Number); !ok || twin != n {
					t.Errorf("%s (%s) = %s: deprecated name without its %s twin (%v)", at, kind, n, repl, x[repl])
				}
			}
			walkGrammar(t, at, kind, val)
		}
	case []any:
		for i, val := range x {
			walkGrammar(t, fmt.Sprintf("%s[%d]", where, i), kind, val)
		}
	}
}

// checkGrammar decodes a response and walks it; it also checks the
// API-Version header.
func checkGrammar(t *testing.T, name string, r *apptest.Response) map[string]any {
	t.Helper()
	if r.Status >= 300 {
		t.Fatalf("%s: %d %s", name, r.Status, r.Body)
	}
	if got := r.Header.Get("API-Version"); got != api.APIVersion {
		t.Errorf("%s: API-Version %q, want %q", name, got, api.APIVersion)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v: %s", name, err, r.Body)
	}
	walkGrammar(t, name, "", v)
	m, _ := v.(map[string]any)
	return m
}

// TestOneGrammarEveryObject makes one object of every kind a merchant's key
// can make in test mode, reads each back alone and in its list, reads the
// events they made, and walks every answer: each timestamp is RFC 3339 UTC
// in whole seconds, each money field is *_minor (or a deprecated name
// beside its *_minor twin), and each answer names the API version.
func TestOneGrammarEveryObject(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		id := func(m map[string]any) string { s, _ := m["id"].(string); return s }
		checkGrammar(t, "topup", e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 1_000_000}))
		pi := checkGrammar(t, "payment intent", e.Post("/v1/payment_intents", map[string]any{"amount": 5000, "currency": "DJF",
			"provider": "bank_a", "customer_msisdn": "77123456"}))
		checkGrammar(t, "confirm", e.Post("/v1/payment_intents/"+id(pi)+"/confirm", map[string]any{"otp": "123456"}))
		re := checkGrammar(t, "refund", e.Post("/v1/refunds", map[string]any{"payment_intent": id(pi), "amount_minor": 1000}))
		po := checkGrammar(t, "payout", e.Post("/v1/payouts", map[string]any{"amount_minor": 700, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377123456"}))
		if po["amount_minor"] != json.Number("700") || po["amount"] != json.Number("700") {
			t.Errorf("payout amount_minor %v, amount (deprecated) %v", po["amount_minor"], po["amount"])
		}
		bA := checkGrammar(t, "batch A", e.Post("/v1/payouts/bulk", map[string]any{"description": "A", "items": []any{
			map[string]any{"amount_minor": 100, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}}}))
		bB := checkGrammar(t, "batch B", e.Post("/v1/payouts/bulk", map[string]any{"currency": "DJF", "rows": []any{
			map[string]any{"amount_minor": 200, "provider": "wallet_b", "recipient_msisdn": "+25377123456", "reference": "r1"}}}))
		checkGrammar(t, "approve batch B", e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + id(bB) + "/approve", Key: e.SK2}))
		term := checkGrammar(t, "terminal", e.Post("/v1/terminals", map[string]any{"serial_number": "SN-GRAMMAR-1", "model": "countertop"}))
		ep := checkGrammar(t, "webhook endpoint", e.Post("/v1/webhook_endpoints", map[string]any{"url": "http://127.0.0.1:9/hook", "enabled_events": []string{"*"}}))
		clk := checkGrammar(t, "test clock", e.Post("/v1/test_helpers/test_clocks", map[string]any{"frozen_time": time.Date(2024, 2, 1, 10, 0, 0, 0, time.UTC).Unix()}))
		cus := checkGrammar(t, "customer", e.Post("/v1/customers", map[string]any{"name": "Grammar", "test_clock": id(clk),
			"default_payment": map[string]any{"provider": "wallet_c", "customer_msisdn": "+25377123456", "metadata": map[string]string{"auth_mode": "APP"}}}))
		if cus["created_at"] != "2024-02-01T10:00:00Z" {
			t.Errorf("customer on a clock: created_at %v, want the clock's time", cus["created_at"])
		}
		sub := checkGrammar(t, "subscription", e.Post("/v1/subscriptions", map[string]any{"customer": id(cus), "currency": "DJF", "interval": "month",
			"items": []any{map[string]any{"description": "Plan", "amount_minor": 1500}}}))
		if sub["created_at"] != "2024-02-01T10:00:00Z" {
			t.Errorf("subscription on a clock: created_at %v, want the clock's time", sub["created_at"])
		}
		inv := checkGrammar(t, "invoice", e.Post("/v1/invoices", map[string]any{"customer": id(cus), "currency": "DJF",
			"lines": []any{map[string]any{"description": "Setup", "amount_minor": 900}}}))
		if n, _ := inv["number"].(string); !strings.HasPrefix(n, "INV-") || inv["created_at"] != "2024-02-01T10:00:00Z" || inv["amount_due_minor"] != json.Number("900") {
			t.Errorf("invoice: number %v, created_at %v, amount_due_minor %v", inv["number"], inv["created_at"], inv["amount_due_minor"])
		}
		bal := checkGrammar(t, "balance", e.Get("/v1/balance"))
		if b, _ := bal["balances"].([]any); len(b) == 0 {
			t.Fatalf("balance: %v", bal)
		}

		for _, p := range []string{"/v1/payment_intents/" + id(pi), "/v1/refunds/" + id(re), "/v1/payouts/" + id(po),
			"/v1/payouts/bulk/" + id(bA), "/v1/payouts/bulk/" + id(bB), "/v1/terminals/" + id(term), "/v1/webhook_endpoints/" + id(ep),
			"/v1/test_helpers/test_clocks/" + id(clk), "/v1/customers/" + id(cus), "/v1/subscriptions/" + id(sub), "/v1/invoices/" + id(inv),
			"/v1/settings", "/v1/reports/settlement?date=" + time.Now().UTC().Format("2006-01-02")} {
			checkGrammar(t, "GET "+p, e.Get(p))
		}
		lists := []string{"/v1/payment_intents", "/v1/refunds", "/v1/payouts?limit=100", "/v1/payouts/bulk", "/v1/terminals", "/v1/webhook_endpoints",
			"/v1/test_helpers/test_clocks", "/v1/customers", "/v1/subscriptions", "/v1/invoices", "/v1/balance_transactions?limit=100",
			"/v1/disputes", "/v1/audit_events", "/v1/events?limit=100"}
		for _, p := range lists {
			l := checkGrammar(t, "GET "+p, e.Get(p))
			if d, _ := l["data"].([]any); len(d) == 0 && !slices.Contains([]string{"/v1/disputes", "/v1/audit_events"}, p) {
				t.Errorf("GET %s: empty list", p)
			}
		}
		// Every event's object is checked too (GET /v1/events above walks
		// data.object); one event is read alone and with its deliveries.
		evs := checkGrammar(t, "events", e.Get("/v1/events?limit=1"))
		if d, _ := evs["data"].([]any); len(d) == 1 {
			ev := id(d[0].(map[string]any))
			checkGrammar(t, "event", e.Get("/v1/events/"+ev))
			checkGrammar(t, "deliveries", e.Get("/v1/events/"+ev+"/deliveries"))
		}
		// Errors name the version too.
		if r := e.Get("/v1/payouts/po_missing"); r.Status != 404 || r.Header.Get("API-Version") != api.APIVersion {
			t.Errorf("404: %d, API-Version %q", r.Status, r.Header.Get("API-Version"))
		}
	})
}

// TestDeprecatedNamesStillWork: every name API version 2026-11-29
// deprecates still works, with the value of the name that replaces it:
// amount on a sandbox top-up request; a payout's amount; a balance's
// available, reserved and pending; an invoice's amount_due, amount_paid and
// amount_remaining.
func TestDeprecatedNamesStillWork(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		num := func(m map[string]any, k string) string { n, _ := m[k].(json.Number); return string(n) }
		top := checkGrammar(t, "top-up with amount", e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount": 50_000}))
		if num(top, "amount_minor") != "50000" {
			t.Fatalf("top-up with the deprecated amount: %v", top)
		}
		po := checkGrammar(t, "payout", e.Post("/v1/payouts", map[string]any{"amount": 1200, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377123456", "reference": "dep-1"}))
		if num(po, "amount") != "1200" || num(po, "amount_minor") != "1200" {
			t.Errorf("payout: amount %v, amount_minor %v", po["amount"], po["amount_minor"])
		}
		bal := checkGrammar(t, "balance", e.Get("/v1/balance"))
		b := bal["balances"].([]any)[0].(map[string]any)
		for _, k := range []string{"available", "reserved", "pending"} {
			if num(b, k) == "" || num(b, k) != num(b, k+"_minor") {
				t.Errorf("balance %s %v, %s_minor %v", k, b[k], k, b[k+"_minor"])
			}
		}
		if num(b, "available") != "48800" {
			t.Errorf("balance available %v, want 48800", b["available"])
		}
		cus := checkGrammar(t, "customer", e.Post("/v1/customers", map[string]any{"name": "Old names",
			"default_payment": map[string]any{"provider": "wallet_c", "customer_msisdn": "+253000000001", "metadata": map[string]string{"auth_mode": "APP"}}}))
		inv := checkGrammar(t, "invoice", e.Post("/v1/invoices", map[string]any{"customer": cus["id"], "currency": "DJF",
			"lines": []any{map[string]any{"description": "Setup", "amount_minor": 900}}}))
		inv = checkGrammar(t, "finalize", e.Post("/v1/invoices/"+inv["id"].(string)+"/finalize", nil))
		for _, k := range []string{"amount_due", "amount_paid", "amount_remaining"} {
			if num(inv, k) == "" || num(inv, k) != num(inv, k+"_minor") {
				t.Errorf("invoice %s %v, %s_minor %v", k, inv[k], k, inv[k+"_minor"])
			}
		}
		if num(inv, "amount_due") != "900" {
			t.Errorf("invoice amount_due %v", inv["amount_due"])
		}
	})
}
