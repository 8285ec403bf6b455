package portal_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserRedeliverWebhook: in a real browser, add a webhook endpoint
// (its secret shown once), watch a payment's event delivered on the
// endpoint's page, and press Redeliver: the receiver gets the event again.
func TestBrowserRedeliverWebhook(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		rc := &receiver{}
		srv := httptest.NewServer(rc)
		defer srv.Close()
		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		b.open(e.URL + "/portal/test/webhook_endpoints")
		b.do(chromedp.SendKeys(chromedp.ID("f-url"), srv.URL+"/hook"),
			chromedp.SendKeys(chromedp.ID("f-description"), "order system"))
		b.click(`form[action$="/webhook_endpoints"] button[type=submit]`)
		if s := b.text("#endpoint-secret"); !strings.HasPrefix(s, "whsec_") {
			t.Fatalf("secret: %.10q", s)
		}
		b.shot("endpoint-created")
		b.click("#endpoint-link")
		endpointURL, err := chromedp.Run(b.ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		newIntent(t, e, 1200, "success")
		// Deliveries are asynchronous: reload until one has succeeded.
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			b.open(endpointURL)
			if b.count(`table.deliveries .status.succeeded`) >= 1 {
				break
			}
			if time.Now().After(deadline) {
				b.shot("no-delivery")
				t.Fatal("no succeeded delivery shown")
			}
		}
		b.shot("delivered")
		evID := b.text(`table.deliveries tbody tr:first-child td:nth-child(2) code`)
		before := rc.count(evID)
		b.click(`table.deliveries tbody tr:first-child button[aria-label^="Redeliver"]`)
		if notice := b.text(`p.notice`); !strings.Contains(notice, "queued for delivery again") {
			t.Errorf("notice: %q", notice)
		}
		waitFor(t, "the redelivered event at the receiver", func() bool { return rc.count(evID) > before })
		b.open(endpointURL)
		b.shot("redelivered")
		if n := b.count(`table.deliveries tbody tr[id^="delivery-"]`); n < 2 {
			t.Fatalf("deliveries listed after redeliver: %d", n)
		}
	})
}
