package portal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserAnswerDispute: in a real browser, a user opens a dispute from
// the list (where it needs a response), fills the evidence form, saves it,
// then submits it with the sandbox's winning evidence; the page says so, the
// evidence becomes read-only, and the dispute is won a push delay later.
func TestBrowserAnswerDispute(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		dp := disputedPayment(t, e, 4500, "browser-dispute-1")
		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		b.open(e.URL + "/portal/test/disputes")
		b.click(`#open-` + dp + ` a[href$="` + dp + `"]`)
		b.do(chromedp.WaitVisible(chromedp.ID("evidence-form")),
			chromedp.SendKeys(chromedp.ID("f-customer_name"), "Amina Hassan"),
			chromedp.SendKeys(chromedp.ID("f-receipt_text"), "Order 1042, delivered"))
		b.shot("dispute-evidence-form")
		b.click(`#evidence-form button[value=false]`)
		if n := b.text("p.notice"); !strings.Contains(n, "evidence was saved") {
			t.Fatalf("notice after saving: %q", n)
		}
		if s := b.text("#dispute-status"); s != "needs_response" {
			t.Fatalf("status after saving: %q", s)
		}
		b.do(chromedp.SendKeys(chromedp.ID("f-uncategorized_text"), "winning_evidence"))
		b.click(`#evidence-form button[value=true]`)
		if n := b.text("p.notice"); !strings.Contains(n, "evidence was submitted") {
			t.Fatalf("notice after submitting: %q", n)
		}
		// The push delay (3 s here) leaves the dispute under review while the
		// page renders; a machine slow enough to pass it shows it won already,
		// which the wait below checks anyway.
		if s := b.text("#dispute-status"); s != "under_review" && s != "won" {
			t.Fatalf("status after submitting: %q", s)
		} else if s == "won" {
			t.Logf("the page rendered after the push delay: already won")
		}
		if ev := b.text("#evidence"); !strings.Contains(ev, "Amina Hassan") || !strings.Contains(ev, "Order 1042, delivered") {
			t.Fatalf("read-only evidence: %q", ev)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			b.open(e.URL + "/portal/test/disputes/" + dp)
			if s := b.text("#dispute-status"); s == "won" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the dispute was not won")
			}
			time.Sleep(100 * time.Millisecond)
		}
		b.shot("dispute-won")
		if tl := b.text("#timeline"); !strings.Contains(tl, "dispute.funds_reinstated") {
			t.Fatalf("timeline: %q", tl)
		}
	}, func(c *app.Config) { c.SandboxPushDelay = 3 * time.Second })
}
