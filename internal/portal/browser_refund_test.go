package portal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// TestBrowserRefundFourEyes: in a real browser, a user refunds more than
// the approval threshold from the payment intent page; the refund waits for
// approval with its amount held; the same form posted again by the browser
// makes no second refund; the user's own approval is refused on the page; a
// second user signs in, approves it, and the refund succeeds.
func TestBrowserRefundFourEyes(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		pi, _ := r.Map(t)["id"].(string)
		if c := e.Post("/v1/payment_intents/"+pi+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
		if s := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 500}); s.Status != 200 {
			t.Fatalf("settings: %d %s", s.Status, s.Body)
		}
		if _, err := e.Main.Merchants.CreateUser(context.Background(), e.Merchant.MerchantID, "second-refunds@example.com", "second-password-1", "approver"); err != nil {
			t.Fatal(err)
		}
		intentURL := e.URL + "/portal/test/payment_intents/" + pi

		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		b.open(intentURL)
		b.do(chromedp.SendKeys(chromedp.ID("f-amount_minor"), "600"),
			chromedp.SetValue(chromedp.ID("f-reason"), "requested_by_customer"),
			// Keep what the form sends, to post it again below.
			chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem("refundForm",
				new URLSearchParams(new FormData(document.getElementById("refund-form"))).toString())`))
		b.shot("refund-form")
		b.click(`#refund-form button[type=submit]`)
		if n := b.text("p.notice"); !strings.Contains(n, "another user or key must approve it") {
			t.Fatalf("notice after the refund: %q", n)
		}
		refundID, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('tr[id^="refund-"]').id.slice(7)`))
		if err != nil || !strings.HasPrefix(refundID, "re_") {
			t.Fatalf("refund row: %q (%v)", refundID, err)
		}
		row := "#refund-" + refundID
		if s := b.text(row + " .status"); s != "requires_approval" {
			t.Fatalf("refund status on the page: %q", s)
		}
		b.shot("refund-requires-approval")
		if got := reservedDJF(t, e); got != 600 {
			t.Fatalf("reserved while the refund waits: %d, want 600", got)
		}

		// The browser posts the same form again (a double click or a
		// re-post): it lands on the intent page, and there is still one
		// refund.
		status, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](`fetch(document.getElementById("refund-form").action, {method: "POST",
			headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: sessionStorage.getItem("refundForm")}).then(r => r.status)`,
			chromedp.EvalAwaitPromise))
		if err != nil || status != 200 {
			t.Fatalf("the form posted again: %v (%v)", status, err)
		}
		b.open(intentURL)
		if n := b.count(`tr[id^="refund-"]`); n != 1 {
			t.Fatalf("%d refunds after the form was posted twice", n)
		}

		b.click(`form[aria-label="Approve ` + refundID + `"] button[type=submit]`)
		if code := b.text("#page-error .code"); code != "self_approval_not_allowed" {
			t.Fatalf("self-approval: %q", code)
		}
		b.shot("self-approval-refused")

		b.click(`form[action="/portal/logout"] button`)
		b.login(e.URL, "second-refunds@example.com", "second-password-1")
		b.open(intentURL)
		b.click(`form[aria-label="Approve ` + refundID + `"] button[type=submit]`)
		if s := b.text(row + " .status"); s != "succeeded" {
			t.Fatalf("refund after the second user's approval: %q", s)
		}
		b.shot("refund-approved")

		in := e.Get("/v1/payment_intents/" + pi).Map(t)
		if in["amount_refunded_minor"] != float64(600) {
			t.Fatalf("intent after approval: %v", in)
		}
		re := e.Get("/v1/refunds/" + refundID).Map(t)
		if re["status"] != "succeeded" || re["approved_by"] == nil {
			t.Fatalf("refund after approval: %v", re)
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}

// reservedDJF is the merchant's test-mode DJF reserved balance.
func reservedDJF(t *testing.T, e *apptest.Env) int64 {
	t.Helper()
	bs, err := ledger.Balances(context.Background(), e.Main.DB, e.Merchant.MerchantID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Currency == "DJF" {
			return b.Reserved
		}
	}
	return 0
}
