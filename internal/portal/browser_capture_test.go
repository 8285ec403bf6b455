package portal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// TestBrowserHostedCardManualCapture: in a real browser, a customer pays a
// manual-capture card intent on the hosted card page; the authorisation is
// held (requires_capture, nothing available); a user then captures part of
// it from the portal's payment intent page, which shows it succeeded with
// the captured amount, credited once. (TestIntentCaptureAndCancelPages
// covers the same forms over plain HTTP: refusals and repeated posts.)
func TestBrowserHostedCardManualCapture(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "USD", "provider": "wallet_a",
			"capture_method": "manual", "return_url": e.URL + "/portal/test/", "metadata": map[string]string{"wallet_a_mode": "card"}})
		in := r.Map(t)
		pi, _ := in["id"].(string)
		next, _ := in["next_action"].(map[string]any)
		page, _ := next["redirect_url"].(string)
		if pi == "" || page == "" {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}

		b.open(page)
		b.do(chromedp.WaitVisible(chromedp.ID("card_number")),
			chromedp.SendKeys(chromedp.ID("card_number"), "4242 4242 4242 4242"),
			chromedp.SetValue(chromedp.ID("exp_month"), "12"),
			chromedp.SetValue(chromedp.ID("exp_year"), "2040"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"))
		b.shot("hosted-card-page")
		b.click("#pay")
		held := e.Get("/v1/payment_intents/" + pi).Map(t)
		if held["status"] != "requires_capture" || held["amount_capturable_minor"] != float64(1000) {
			t.Fatalf("after the card page: %v", held)
		}
		if got := availableUSD(t, e); got != 0 {
			t.Fatalf("available %d while the authorisation is held", got)
		}

		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		b.open(e.URL + "/portal/test/payment_intents/" + pi)
		if s := b.text("#intent-status"); s != "requires_capture" {
			t.Fatalf("status on the page: %q", s)
		}
		if c := b.text("#intent-capturable"); !strings.Contains(c, "10.00") {
			t.Fatalf("capturable on the page: %q", c)
		}
		b.do(chromedp.SendKeys(chromedp.ID("f-amount_to_capture_minor"), "600"))
		b.shot("capture-form")
		b.click(`#capture-form button[type=submit]`)
		if s := b.text("#intent-status"); s != "succeeded" {
			t.Fatalf("status after the capture: %q", s)
		}
		if n := b.count("#capture-form"); n != 0 {
			t.Fatalf("%d capture forms on a captured intent", n)
		}
		b.shot("captured")
		got := e.Get("/v1/payment_intents/" + pi).Map(t)
		if got["status"] != "succeeded" || got["amount_captured_minor"] != float64(600) {
			t.Fatalf("after the capture: %v", got)
		}
		if a := availableUSD(t, e); a != 600 {
			t.Fatalf("available %d after capturing 600", a)
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}

// availableUSD is the merchant's available USD balance in test mode.
func availableUSD(t *testing.T, e *apptest.Env) int64 {
	t.Helper()
	var b struct {
		Balances []struct {
			Currency  string
			Available int64
		}
	}
	e.Get("/v1/balance").JSON(t, &b)
	for _, x := range b.Balances {
		if x.Currency == "USD" {
			return x.Available
		}
	}
	return 0
}
