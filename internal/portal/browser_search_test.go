package portal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserSearchAndTestClock: in Chromium, a user types a customer's
// e-mail address into the header's search box and presses Enter: the
// results list the customer, its subscription, invoice and payment, grouped
// by type; typing the invoice's id opens the invoice's page, which offers
// the test-mode actions. Then, on a test clock's page, +1 month advances
// the clock: the page shows it advancing, refreshes itself (progress.js)
// and shows it ready a month later.
func TestBrowserSearchAndTestClock(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		cus, sub, inv, pi := billedCustomer(t, e, e.SK, "Hodan Ali", "hodan@example.com", map[string]string{"crm": "A-17"})
		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)

		b.do(chromedp.WaitVisible(chromedp.ID("search-q")))
		b.press(chromedp.SendKeys(chromedp.ID("search-q"), "Hodan@Example.com"+kb.Enter))
		for _, id := range []string{cus, sub, inv, pi} {
			if n := b.count(`a[href$="` + id + `"]`); n == 0 {
				t.Fatalf("the results do not link %s", id)
			}
		}
		if got := b.text("#search-customers h2"); got != "Customers" {
			t.Fatalf("first group %q", got)
		}
		b.shot("search-email")

		b.press(chromedp.SendKeys(chromedp.ID("search-q"), inv+kb.Enter))
		if got := b.text("#invoice-status"); got != "paid" && got != "open" {
			t.Fatalf("the id search landed on an invoice %q", got)
		}
		if !strings.Contains(b.text("h1"), inv) {
			t.Fatalf("the id search landed on %q", b.text("h1"))
		}

		// A draft invoice's page offers the actions; finalize it.
		draft := e.Post("/v1/invoices", map[string]any{"customer": cus, "currency": "DJF",
			"lines": []map[string]any{{"description": "Router", "amount_minor": 4200}}}).Map(t)["id"].(string)
		b.open(e.URL + "/portal/test/invoices/" + draft)
		b.do(chromedp.WaitVisible(chromedp.ID("invoice-finalize")))
		b.shot("invoice-actions")
		b.click("#invoice-finalize")
		if got := b.text("#invoice-status"); got != "open" {
			t.Fatalf("after finalize: %q", got)
		}

		// A test clock advanced a month.
		frozen := time.Date(2027, 1, 31, 9, 0, 0, 0, time.UTC).Unix()
		clock := e.Post("/v1/test_helpers/test_clocks", map[string]any{"frozen_time": frozen, "name": "Renewals"}).Map(t)["id"].(string)
		clocked := e.Post("/v1/customers", map[string]any{"name": "Clocked", "test_clock": clock}).Map(t)["id"].(string)
		if r := e.Post("/v1/subscriptions", map[string]any{"customer": clocked, "currency": "DJF", "interval": "month",
			"collection_method": "send_invoice", "days_until_due": 7,
			"items": []map[string]any{{"description": "Fibre 100", "amount_minor": 1500, "quantity": 1}}}); r.Status/100 != 2 {
			t.Fatalf("subscription: %d %s", r.Status, r.Body)
		}
		b.open(e.URL + "/portal/test/test_clocks/" + clock)
		if got := b.text("#clock-status"); got != "ready" {
			t.Fatalf("a new clock is %q", got)
		}
		b.click("#advance-month")
		if !b.waitText("clock-status", "ready", 60*time.Second) {
			t.Fatalf("the clock never showed ready: %q", b.text("#clock-status"))
		}
		if got := b.text("#clock-time"); got != "2027-02-28 09:00:00 UTC" {
			t.Fatalf("clock time after +1 month: %q", got)
		}
		b.shot("test-clock-advanced")
	})
}
