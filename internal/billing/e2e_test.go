package billing_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/webhook"
)

// TestEndToEnd drives the billing API of a real payd per engine; every
// response is checked against api/openapi.yaml.
func TestEndToEnd(t *testing.T) {
	suites := []struct {
		name string
		run  func(*testing.T, *apptest.Env)
	}{
		{"BadInputChangesNothing", testBadInput},
		{"Isolation", testIsolation},
		{"RealTimePush", testRealTimePush},
		{"ClockAdvance", testClockAdvance},
		{"ClockAdvanceEvents", testClockAdvanceEvents},
		{"ClockFirstAttempt", testClockFirstAttempt},
		{"ForeignIntentPaysNothing", testForeignIntentPaysNothing},
		{"LinkTokenDerived", testLinkTokenDerived},
		{"HostedPageOTP", testHostedPageOTP},
		{"InvoiceLifecycle", testInvoiceLifecycle},
		{"DeleteCustomer", testDeleteCustomer},
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		for _, s := range suites {
			t.Run(s.name, func(t *testing.T) { s.run(t, e) })
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatalf("ledger: %v", err)
		}
	})
}

type obj = map[string]any

func post(t *testing.T, e *apptest.Env, path string, body any, want int) obj {
	t.Helper()
	r := e.Post(path, body)
	if r.Status != want {
		t.Fatalf("POST %s: %d %s, want %d", path, r.Status, r.Body, want)
	}
	return r.Map(t)
}

func get(t *testing.T, e *apptest.Env, path string) obj {
	t.Helper()
	r := e.Get(path)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	return r.Map(t)
}

func customer(t *testing.T, e *apptest.Env, extra obj) string {
	t.Helper()
	body := obj{"name": "Hodan Ali", "email": "hodan@example.com", "phone": "+25377000111",
		"default_payment": obj{"provider": "wallet_c", "customer_msisdn": "+25377000111"}}
	for k, v := range extra {
		body[k] = v
	}
	return post(t, e, "/v1/customers", body, 201)["id"].(string)
}

func subscribe(t *testing.T, e *apptest.Env, cus string) obj {
	t.Helper()
	return post(t, e, "/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month",
		"items": []obj{{"description": "Fibre 100", "amount_minor": 2500}}}, 201)
}

// waitFor polls until ok; the bound only stops a test that hangs (a slow,
// loaded machine under -race takes tens of seconds for an advance).
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func testBadInput(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, nil)
	cases := []struct {
		path  string
		body  obj
		param string
	}{
		{"/v1/customers", obj{"email": "a@b.example"}, "name"},
		{"/v1/customers", obj{"name": "X", "phone": "0077"}, "phone"},
		{"/v1/customers", obj{"name": "X", "email": "not an address"}, "email"},
		{"/v1/customers", obj{"name": "X", "default_payment": obj{"provider": "wallet_b"}}, "default_payment.provider"},
		{"/v1/customers", obj{"name": "X", "default_payment": obj{"provider": "wallet_c"}}, "default_payment.customer_msisdn"},
		{"/v1/customers", obj{"name": "X", "default_payment": obj{"provider": "wallet_c", "customer_msisdn": "+25377000111",
			"metadata": obj{"auth_mode": "SMS"}}}, "default_payment.metadata.auth_mode"},
		{"/v1/customers", obj{"name": "X", "test_clock": "clock_nope"}, "test_clock"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "items": []obj{{"description": "A", "amount_minor": 1}}}, "interval"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "hour", "items": []obj{{"description": "A", "amount_minor": 1}}}, "interval"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month", "interval_count": 37, "items": []obj{{"description": "A", "amount_minor": 1}}}, "interval_count"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month", "items": []obj{}}, "items"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month", "items": []obj{{"description": "A", "amount_minor": 0}}}, "items[0].amount_minor"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month", "items": []obj{{"description": "A", "amount_minor": 4611686018427387904, "quantity": 2}}}, "items[0].amount_minor"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "djf", "interval": "month", "items": []obj{{"description": "A", "amount_minor": 1}}}, "currency"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month", "items": []obj{{"description": "A", "amount_minor": 1}}, "days_until_due": 5}, "days_until_due"},
		{"/v1/subscriptions", obj{"customer": "cus_nope", "currency": "DJF", "interval": "month", "items": []obj{{"description": "A", "amount_minor": 1}}}, "customer"},
		{"/v1/subscriptions", obj{"customer": cus, "currency": "DJF", "interval": "month", "items": []obj{{"description": "A", "amount_minor": 1}}, "trial_days": -1}, "trial_days"},
		{"/v1/invoices", obj{"customer": cus, "currency": "DJF", "lines": []obj{{"description": "", "amount_minor": 5}}}, "lines[0].description"},
		{"/v1/test_helpers/test_clocks", obj{"frozen_time": 5}, "frozen_time"},
	}
	for _, c := range cases {
		r := e.Post(c.path, c.body)
		if r.Status != 400 {
			t.Errorf("POST %s %v: %d %s, want 400", c.path, c.body, r.Status, r.Body)
			continue
		}
		var b struct {
			Error struct{ Param string } `json:"error"`
		}
		r.JSON(t, &b)
		if b.Error.Param != c.param {
			t.Errorf("POST %s %v: param %q, want %q", c.path, c.body, b.Error.Param, c.param)
		}
	}
	if n := len(get(t, e, "/v1/subscriptions?customer="+cus)["data"].([]any)); n != 0 {
		t.Errorf("%d subscriptions after bad requests", n)
	}
	if r := e.Get("/v1/invoices?status=late"); r.Status != 400 {
		t.Errorf("bad status filter: %d", r.Status)
	}
}

func testIsolation(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, nil)
	sub := subscribe(t, e, cus)
	other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/customers/" + cus, "/v1/subscriptions/" + sub["id"].(string), "/v1/invoices/" + sub["latest_invoice"].(string)} {
		if r := e.Do(apptest.Request{Method: "GET", Path: p, Key: other.SecretKeys[0]}); r.Status != 404 {
			t.Errorf("another merchant's %s: %d", p, r.Status)
		}
	}
	l := e.Do(apptest.Request{Method: "GET", Path: "/v1/customers", Key: other.SecretKeys[0]})
	if strings.Contains(string(l.Body), cus) {
		t.Error("another merchant lists the customer")
	}
}

// testRealTimePush: a subscription on wallet_c push without a clock: the
// first invoice's attempt runs right after creation, the customer's
// approval arrives PAYD_SANDBOX_PUSH_DELAY later, and the invoice is paid
// once.
func testRealTimePush(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, nil)
	sub := subscribe(t, e, cus)
	if sub["status"] != "active" {
		t.Fatalf("subscription %v", sub["status"])
	}
	inv := sub["latest_invoice"].(string)
	var v obj
	waitFor(t, "the invoice paid", func() bool { v = get(t, e, "/v1/invoices/"+inv); return v["status"] == "paid" })
	if v["amount_paid"].(float64) != 2500 || v["payment_intent"] == nil || v["attempt_count"].(float64) != 1 {
		t.Errorf("paid invoice: %v", v)
	}
	pi := get(t, e, "/v1/payment_intents/"+v["payment_intent"].(string))
	if pi["status"] != "succeeded" || pi["metadata"].(obj)["invoice"] != inv {
		t.Errorf("the invoice's intent: %v", pi)
	}
	time.Sleep(200 * time.Millisecond) // a duplicate would have come by now
	var n int
	e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'invoice.paid'", inv).Scan(&n)
	if n != 1 {
		t.Errorf("%d invoice.paid events", n)
	}
}

// testClockAdvance: an advance bills each period on the clock, and what it
// makes (invoices, payment intents, their events) shows the clock's time in
// created_at.
func testClockAdvance(t *testing.T, e *apptest.Env) {
	start := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	clk := post(t, e, "/v1/test_helpers/test_clocks", obj{"frozen_time": start.Unix(), "name": "year"}, 201)
	id := clk["id"].(string)
	if clk["status"] != "ready" {
		t.Fatalf("new clock: %v", clk)
	}
	cus := customer(t, e, obj{"test_clock": id})
	sub := subscribe(t, e, cus)
	advance := func(to time.Time) {
		t.Helper()
		c := post(t, e, "/v1/test_helpers/test_clocks/"+id+"/advance", obj{"frozen_time": to.Unix()}, 200)
		if c["status"] != "advancing" && c["status"] != "ready" {
			t.Fatalf("advance: %v", c)
		}
		waitFor(t, "the clock ready", func() bool { return get(t, e, "/v1/test_helpers/test_clocks/"+id)["status"] == "ready" })
	}
	advance(start.AddDate(0, 2, 0))
	if r := e.Post("/v1/test_helpers/test_clocks/"+id+"/advance", obj{"frozen_time": start.Unix()}); r.Status != 400 || !strings.Contains(string(r.Body), `"param":"frozen_time"`) {
		t.Errorf("backwards: %d %s", r.Status, r.Body)
	}
	invs := get(t, e, "/v1/invoices?subscription="+sub["id"].(string))["data"].([]any)
	if len(invs) != 3 {
		t.Fatalf("%d invoices after two months", len(invs))
	}
	wantStarts := []string{"2027-03-31T10:00:00Z", "2027-02-28T10:00:00Z", "2027-01-31T10:00:00Z"} // newest first
	for i, raw := range invs {
		v := raw.(obj)
		if v["status"] != "paid" || v["period_start"] != wantStarts[i] {
			t.Errorf("invoice %d: %v %v", i, v["status"], v["period_start"])
		}
		if i == len(invs)-1 {
			continue // the first invoice's attempt was made at creation
		}
		// The intent the advance made, and its events, carry the
		// attempt's time on the clock, not the real time.
		pi, _ := v["payment_intent"].(string)
		intent := get(t, e, "/v1/payment_intents/"+pi)
		if intent["created_at"] != v["paid_at"] || intent["created_at"] != wantStarts[i] {
			t.Errorf("invoice %d's intent created_at %v, want the clock's %v (paid_at %v)", i, intent["created_at"], wantStarts[i], v["paid_at"])
		}
		evs := get(t, e, "/v1/events?related_object_id="+pi)["data"].([]any)
		if len(evs) == 0 {
			t.Errorf("no events of intent %s", pi)
		}
		for _, raw := range evs {
			ev := raw.(obj)
			data, _ := ev["data"].(obj)
			object, _ := data["object"].(obj)
			if ev["created_at"] != wantStarts[i] || object["created_at"] != wantStarts[i] {
				t.Errorf("event %v of intent %s: created_at %v, its intent's %v, want the clock's %v", ev["type"], pi, ev["created_at"], object["created_at"], wantStarts[i])
			}
		}
	}
	s := get(t, e, "/v1/subscriptions/"+sub["id"].(string))
	if s["current_period_end"] != "2027-04-30T10:00:00Z" || s["status"] != "active" {
		t.Errorf("subscription after two months: %v %v", s["status"], s["current_period_end"])
	}
}

// testClockAdvanceEvents: every event a month's advance emits (billing's
// own, invoice.* and customer.subscription.*, and its payment intents')
// shows in created_at the clock's time of the step that made it: the
// period start for the paying customer, each retry's and the period's time
// for a refusing one, in GET /v1/events and in each webhook delivery.
// Events outside the clock's steps (a customer without a clock, and the
// requests on the clock's objects) keep the real time.
func testClockAdvanceEvents(t *testing.T, e *apptest.Env) {
	// A merchant of its own: every event it has is this test's.
	m := e.NewMerchant(merchants.CreateParams{Name: "Clock events"})
	own := *e
	own.SK = m.SecretKeys[0]
	e = &own
	day := 24 * time.Hour
	since := time.Now().Add(-time.Second).Truncate(time.Second)
	realTime := func(ev obj) bool {
		at, err := time.Parse(time.RFC3339, ev["created_at"].(string))
		return err == nil && !at.Before(since) && !at.After(time.Now().Add(time.Second))
	}

	// Outside any clock: the real time.
	plain := subscribe(t, e, customer(t, e, nil))
	waitFor(t, "the plain subscription's first invoice paid", func() bool {
		return get(t, e, "/v1/invoices/"+plain["latest_invoice"].(string))["status"] == "paid"
	})

	start := time.Date(2027, 3, 1, 8, 0, 0, 0, time.UTC)
	clk := post(t, e, "/v1/test_helpers/test_clocks", obj{"frozen_time": start.Unix()}, 201)["id"].(string)
	paying := subscribe(t, e, customer(t, e, obj{"test_clock": clk}))
	refusing := subscribe(t, e, customer(t, e, obj{"test_clock": clk, "default_payment": obj{"provider": "wallet_a",
		"customer_msisdn": providers.MagicMSISDN(providers.InsufficientFunds)}}))
	waitFor(t, "the first attempts made", func() bool {
		return get(t, e, "/v1/invoices/"+paying["latest_invoice"].(string))["status"] == "paid" &&
			get(t, e, "/v1/subscriptions/"+refusing["id"].(string))["status"] == "past_due"
	})
	before := get(t, e, "/v1/events?limit=100")["data"].([]any)
	if len(before) == 0 || len(before) == 100 {
		t.Fatalf("%d events before the advance", len(before))
	}
	for _, raw := range before {
		ev := raw.(obj)
		object, _ := ev["data"].(obj)["object"].(obj)
		md, _ := object["metadata"].(obj)
		onClock := object["test_clock"] == clk || md["invoice"] == paying["latest_invoice"] || md["invoice"] == refusing["latest_invoice"]
		switch ev["type"] {
		case "customer.created", "customer.subscription.created", "invoice.created", "invoice.finalized":
			onClock = false // made by a request
		}
		if onClock {
			// The first attempts (the attempt job's, a step on the clock).
			if ev["created_at"] != start.Format(time.RFC3339) {
				t.Errorf("event %v of the first attempt on the clock: created_at %v, want the clock's %v", ev["type"], ev["created_at"], start)
			}
		} else if !realTime(ev) {
			t.Errorf("event %v made by a request or without a clock: created_at %v, want the real time (since %v)", ev["type"], ev["created_at"], since)
		}
	}

	// A webhook endpoint receives what the advance emits.
	var mu sync.Mutex
	delivered := map[string]string{} // event id: the payload's created_at
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			CreatedAt string `json:"created_at"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &env) == nil {
			mu.Lock()
			delivered[r.Header.Get(webhook.HeaderEventID)] = env.CreatedAt
			mu.Unlock()
		}
	}))
	defer hook.Close()
	post(t, e, "/v1/webhook_endpoints", obj{"url": hook.URL, "enabled_events": []string{"*"}}, 201)

	to := start.AddDate(0, 1, 0)
	post(t, e, "/v1/test_helpers/test_clocks/"+clk+"/advance", obj{"frozen_time": to.Unix()}, 200)
	waitFor(t, "the clock ready", func() bool { return get(t, e, "/v1/test_helpers/test_clocks/"+clk)["status"] == "ready" })

	// Every event of the advance, oldest first.
	var evs []obj
	for after := before[0].(obj)["id"].(string); ; {
		page := get(t, e, "/v1/events?limit=100&ending_before="+after)["data"].([]any)
		if len(page) == 0 {
			break
		}
		for i := len(page) - 1; i >= 0; i-- {
			evs = append(evs, page[i].(obj))
		}
		after = page[0].(obj)["id"].(string)
	}
	// The steps: the refusing customer's retries (1, 3 and 5 days apart),
	// then both periods' start.
	steps := map[string]bool{}
	for _, at := range []time.Time{start.Add(day), start.Add(4 * day), start.Add(9 * day), to} {
		steps[at.Format(time.RFC3339)] = true
	}
	types := map[string]int{}
	var failed []any
	for _, ev := range evs {
		types[ev["type"].(string)]++
		object, _ := ev["data"].(obj)["object"].(obj)
		if !steps[ev["created_at"].(string)] {
			t.Errorf("event %v of %v: created_at %v, want the clock's time of a step (%v)", ev["type"], object["id"], ev["created_at"], steps)
		}
		if object["customer"] == paying["customer"] || object["id"] == paying["id"] {
			if ev["created_at"] != to.Format(time.RFC3339) {
				t.Errorf("event %v of the paying customer: created_at %v, want the period's start %v", ev["type"], ev["created_at"], to)
			}
		}
		if ev["type"] == "invoice.payment_failed" && object["id"] == refusing["latest_invoice"] {
			failed = append(failed, ev["created_at"])
		}
		if object["object"] == "payment_intent" && ev["created_at"] != object["created_at"] {
			t.Errorf("event %v of %v: created_at %v, its intent's %v", ev["type"], object["id"], ev["created_at"], object["created_at"])
		}
	}
	for _, typ := range []string{"invoice.created", "invoice.finalized", "invoice.paid", "invoice.payment_failed",
		"customer.subscription.updated", "payment_intent.created", "payment_intent.succeeded"} {
		if types[typ] == 0 {
			t.Errorf("no %s event in the advance (%v)", typ, types)
		}
	}
	want := []any{start.Add(day).Format(time.RFC3339), start.Add(4 * day).Format(time.RFC3339), start.Add(9 * day).Format(time.RFC3339)}
	if fmt.Sprint(failed) != fmt.Sprint(want) {
		t.Errorf("the refused invoice's payment_failed events at %v, want the retries' %v", failed, want)
	}
	if got := get(t, e, "/v1/subscriptions/"+refusing["id"].(string))["status"]; got != "unpaid" {
		t.Errorf("refusing subscription %v after a month", got)
	}
	// Each delivery carries the event's created_at as the API shows it.
	waitFor(t, "every event of the advance delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if _, ok := delivered[ev["id"].(string)]; !ok {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range evs {
		if got := delivered[ev["id"].(string)]; got != ev["created_at"] {
			t.Errorf("delivery of %v %v: created_at %v, the API's %v", ev["type"], ev["id"], got, ev["created_at"])
		}
	}
}

// testClockFirstAttempt: a subscription of a customer on a test clock
// makes its first invoice's attempt at creation, on the clock's time, as
// without a clock: paid and active with no advance; a wallet that refuses
// makes it past_due with the retry a day later on the clock. (Before, no
// intent was made until the clock moved.)
func testClockFirstAttempt(t *testing.T, e *apptest.Env) {
	start := time.Date(2027, 6, 1, 9, 0, 0, 0, time.UTC)
	clk := post(t, e, "/v1/test_helpers/test_clocks", obj{"frozen_time": start.Unix()}, 201)["id"].(string)

	sub := subscribe(t, e, customer(t, e, obj{"test_clock": clk}))
	inv := sub["latest_invoice"].(string)
	var v obj
	waitFor(t, "the clock's first invoice paid", func() bool { v = get(t, e, "/v1/invoices/"+inv); return v["status"] == "paid" })
	if v["payment_intent"] == nil || v["attempt_count"].(float64) != 1 || v["amount_paid"].(float64) != 2500 {
		t.Errorf("paid invoice: %v", v)
	}
	if s := get(t, e, "/v1/subscriptions/"+sub["id"].(string)); s["status"] != "active" {
		t.Errorf("subscription %v after its first invoice paid", s["status"])
	}
	if c := get(t, e, "/v1/test_helpers/test_clocks/"+clk); c["frozen_time"].(float64) != float64(start.Unix()) {
		t.Errorf("the clock moved: %v", c)
	}

	refusing := customer(t, e, obj{"test_clock": clk, "default_payment": obj{"provider": "wallet_a",
		"customer_msisdn": providers.MagicMSISDN(providers.InsufficientFunds)}})
	sub = subscribe(t, e, refusing)
	waitFor(t, "the refused first attempt past_due", func() bool {
		return get(t, e, "/v1/subscriptions/"+sub["id"].(string))["status"] == "past_due"
	})
	v = get(t, e, "/v1/invoices/"+sub["latest_invoice"].(string))
	if v["status"] != "open" || v["attempt_count"].(float64) != 1 || v["next_payment_attempt"] != start.Add(24*time.Hour).Format(time.RFC3339) {
		t.Errorf("refused invoice: status %v attempts %v next %v", v["status"], v["attempt_count"], v["next_payment_attempt"])
	}
}

// testForeignIntentPaysNothing: a payment intent the merchant creates with
// metadata.invoice naming an open invoice (1 DJF against 3,000) pays
// nothing: only the intents billing made for the invoice count. (Before,
// the invoice was paid with amount_paid 1.)
func testForeignIntentPaysNothing(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, nil)
	v := post(t, e, "/v1/invoices", obj{"customer": cus, "currency": "DJF", "collection_method": "send_invoice",
		"lines": []obj{{"description": "Installation", "amount_minor": 3000}}}, 201)
	inv := v["id"].(string)
	post(t, e, "/v1/invoices/"+inv+"/finalize", nil, 200)
	pi := post(t, e, "/v1/payment_intents", obj{"amount_minor": 1, "currency": "DJF", "provider": "wallet_c",
		"customer_msisdn": "+25377000111", "metadata": obj{"invoice": inv, "invoice_attempt": "1"}}, 201)
	waitFor(t, "the merchant's own intent succeeded", func() bool {
		return get(t, e, "/v1/payment_intents/"+pi["id"].(string))["status"] == "succeeded"
	})
	v = get(t, e, "/v1/invoices/"+inv)
	if v["status"] != "open" || v["amount_paid"].(float64) != 0 || v["payment_intent"] != nil {
		t.Errorf("invoice after a foreign 1 DJF intent: status %v amount_paid %v payment_intent %v", v["status"], v["amount_paid"], v["payment_intent"])
	}
	var n int
	e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'invoice.paid'", inv).Scan(&n)
	if n != 0 {
		t.Errorf("%d invoice.paid events for a foreign intent", n)
	}
}

// testLinkTokenDerived: the hosted invoice link's token is an HMAC under a
// key derived for links alone: neither under the secrets key's text (as
// before) nor under an empty key (PostgreSQL without a key, before) does
// one compute it. A link made under the key's text before still opens;
// one under an empty key never does.
func testLinkTokenDerived(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, obj{"default_payment": obj{"provider": "bank_a", "customer_msisdn": "+25377000111"}})
	v := post(t, e, "/v1/invoices", obj{"customer": cus, "currency": "DJF", "collection_method": "send_invoice",
		"lines": []obj{{"description": "Link", "amount_minor": 700}}}, 201)
	v = post(t, e, "/v1/invoices/"+v["id"].(string)+"/finalize", nil, 200)
	u, err := url.Parse(v["hosted_invoice_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("t")
	under := func(key []byte) string {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("payd hosted invoice link\x00"))
		mac.Write([]byte(v["id"].(string)))
		return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:24])
	}
	legacy, empty := under([]byte(e.Main.Config.SecretsKey)), under(nil)
	if token == "" || token == legacy || token == empty {
		t.Fatalf("the link's token %q is computable from the secrets key's text or an empty key", token)
	}
	open := func(tok string) int {
		r := e.Do(apptest.Request{Method: "GET", Path: u.Path + "?t=" + url.QueryEscape(tok)})
		return r.Status
	}
	if got := open(token); got != 200 {
		t.Errorf("the link: %d", got)
	}
	if got := open(legacy); got != 200 {
		t.Errorf("a link made before keys were derived: %d", got)
	}
	if got := open(empty); got != 404 {
		t.Errorf("a token under an empty key: %d", got)
	}
}

// testHostedPageOTP: an OTP rail is never charged automatically; the
// customer pays on the hosted invoice page with an SMS code.
func testHostedPageOTP(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, obj{"default_payment": obj{"provider": "bank_a", "customer_msisdn": "+25377000111"}})
	sub := subscribe(t, e, cus)
	v := get(t, e, "/v1/invoices/"+sub["latest_invoice"].(string))
	hosted := v["hosted_invoice_url"].(string)
	if v["status"] != "open" || v["next_payment_attempt"] != nil {
		t.Fatalf("hosted-only invoice: %v", v)
	}
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page := func(u string) (int, string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	form := func(u string, f url.Values) string {
		resp, err := c.PostForm(u, f)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d", u, resp.StatusCode)
		}
		return e.URL + resp.Header.Get("Location")
	}
	status, body := page(hosted)
	if status != 200 || !strings.Contains(body, "Test merchant") || !strings.Contains(body, "2500 DJF") || !strings.Contains(body, `name="rail"`) {
		t.Fatalf("hosted page: %d %s", status, body)
	}
	if s, _ := page(strings.Replace(hosted, "?t=", "?t=x", 1)); s != 404 {
		t.Errorf("wrong token: %d", s)
	}
	u, _ := url.Parse(hosted)
	// The link's token is derived, not stored: the database holds nothing
	// that opens the page.
	var stored string
	if err := e.Main.DB.QueryRow(t.Context(), "SELECT hosted_token FROM invoices WHERE id = ?", path.Base(u.Path)).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != "" || strings.Contains(hosted, "t=&") {
		t.Errorf("hosted token stored in the database: %q", stored)
	}
	token, base := u.Query().Get("t"), e.URL+u.Path
	next := form(base+"/pay", url.Values{"t": {token}, "rail": {"bank_a"}, "phone": {"+25377000111"}})
	status, body = page(next)
	if status != 200 || !strings.Contains(body, `name="otp"`) {
		t.Fatalf("OTP step: %d %s", status, body)
	}
	piID, _ := url.Parse(next)
	next = form(base+"/confirm", url.Values{"t": {token}, "payment_intent": {piID.Query().Get("payment_intent")}, "otp": {"123456"}})
	if _, body = page(next); !strings.Contains(body, `id="paid"`) {
		t.Fatalf("after the code: %s", body)
	}
	if v = get(t, e, "/v1/invoices/"+v["id"].(string)); v["status"] != "paid" || v["amount_paid"].(float64) != 2500 {
		t.Errorf("invoice after the hosted payment: %v", v)
	}
	if strings.Contains(e.Logs.String(), token) {
		t.Error("the hosted page token is in the logs")
	}
}

func testInvoiceLifecycle(t *testing.T, e *apptest.Env) {
	// An OTP rail: no automatic attempt races the explicit pay.
	cus := customer(t, e, obj{"default_payment": obj{"provider": "wallet_c", "customer_msisdn": "+253000000001", "metadata": obj{"auth_mode": "OTP"}}})
	v := post(t, e, "/v1/invoices", obj{"customer": cus, "currency": "DJF", "lines": []obj{{"description": "Setup", "amount_minor": 4000}}}, 201)
	id := v["id"].(string)
	if v["status"] != "draft" || v["hosted_invoice_url"] != nil {
		t.Fatalf("draft: %v", v)
	}
	if r := e.Post("/v1/invoices/"+id+"/void", nil); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Errorf("void a draft: %d %s", r.Status, r.Body)
	}
	post(t, e, "/v1/invoices/"+id+"/finalize", nil, 200)
	v = post(t, e, "/v1/invoices/"+id+"/pay", nil, 200)
	if v["status"] != "paid" {
		t.Fatalf("pay with the success number: %v", v)
	}
	w := post(t, e, "/v1/invoices", obj{"customer": cus, "currency": "DJF", "lines": []obj{{"description": "Extra", "amount_minor": 100}},
		"collection_method": "send_invoice", "days_until_due": 3}, 201)
	post(t, e, "/v1/invoices/"+w["id"].(string)+"/finalize", nil, 200)
	post(t, e, "/v1/invoices/"+w["id"].(string)+"/mark_uncollectible", nil, 200)
	if w = post(t, e, "/v1/invoices/"+w["id"].(string)+"/void", nil, 200); w["status"] != "void" {
		t.Errorf("void: %v", w)
	}
	if n := len(get(t, e, "/v1/invoices?customer="+cus+"&status=void")["data"].([]any)); n != 1 {
		t.Errorf("%d void invoices listed", n)
	}
}

func testDeleteCustomer(t *testing.T, e *apptest.Env) {
	cus := customer(t, e, obj{"email": "leaving@example.com"})
	sub := subscribe(t, e, cus)
	if l := get(t, e, "/v1/customers?email=leaving@example.com")["data"].([]any); len(l) != 1 {
		t.Fatalf("list by email: %d", len(l))
	}
	up := post(t, e, "/v1/customers/"+cus, obj{"name": "Hodan A."}, 200)
	if up["name"] != "Hodan A." {
		t.Errorf("update: %v", up)
	}
	r := e.Do(apptest.Request{Method: "DELETE", Path: "/v1/customers/" + cus, Key: e.SK})
	if r.Status != 200 || r.Map(t)["deleted"] != true {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if s := get(t, e, "/v1/subscriptions/"+sub["id"].(string)); s["status"] != "canceled" {
		t.Errorf("subscription of a deleted customer: %v", s["status"])
	}
	if r := e.Get("/v1/customers/" + cus); r.Status != 404 {
		t.Errorf("deleted customer: %d", r.Status)
	}
}
