package portal_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserDeliveriesFit1280: at 1280 × 900, an endpoint's deliveries table
// with several failed attempts (long error texts, ids and times) fits the
// page: neither the page nor the content area scrolls sideways.
func TestBrowserDeliveriesFit1280(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, "sqlite")
	b := browser(t)
	// A port nothing listens on: every attempt fails with a long error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/a/rather/long/path/for/the/receiver/webhooks"
	ln.Close()
	r := e.Post("/v1/webhook_endpoints", map[string]any{"url": dead, "description": "a receiver that is down"})
	if r.Status != 201 {
		t.Fatalf("endpoint: %d %s", r.Status, r.Body)
	}
	id, _ := r.Map(t)["id"].(string)
	for _, typ := range []string{"payout.failed", "payment_intent.succeeded", "refund.succeeded"} {
		if tr := e.Post("/v1/sandbox/webhooks/trigger", map[string]any{"event_type": typ}); tr.Status != 201 {
			t.Fatalf("trigger: %d %s", tr.Status, tr.Body)
		}
	}
	b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
	page := e.URL + "/portal/test/webhook_endpoints/" + id
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		b.open(page)
		if b.count(`table.deliveries .status.failed`) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			b.shot("deliveries-pending")
			t.Fatal("the deliveries did not fail in time")
		}
	}
	b.shot("deliveries-1280")
	requireFits1280(t, b, "table.deliveries")
	if !strings.Contains(b.text("table.deliveries"), "Redeliver") {
		t.Error("the Redeliver action is not shown")
	}
}

// widths are the layout measures requireFits1280 reads.
type widths struct {
	Inner, Doc, MainClient, MainScroll, TableRight float64
}

// requireFits1280 fails the test unless, in a 1280 px wide window, the
// first table matching selector fits the page: neither the page nor the
// content area scrolls sideways and the table ends inside the window.
func requireFits1280(t *testing.T, b *tab, selector string) {
	t.Helper()
	js := `(function(){var m=document.querySelector("main");var t=document.querySelector(` + strconv.Quote(selector) + `);
		return {Inner:window.innerWidth,Doc:document.documentElement.scrollWidth,MainClient:m.clientWidth,MainScroll:m.scrollWidth,
		TableRight:t.getBoundingClientRect().right};})()`
	m, err := chromedp.Run(b.ctx, chromedp.Evaluate[widths](js))
	if err != nil {
		t.Fatal(err)
	}
	if m.Inner != 1280 {
		t.Fatalf("window is %v px wide", m.Inner)
	}
	if m.Doc > m.Inner || m.MainScroll > m.MainClient || m.TableRight > m.Inner {
		t.Fatalf("%s does not fit 1280 px: page %v, content %v of %v, table ends at %v",
			selector, m.Doc, m.MainScroll, m.MainClient, m.TableRight)
	}
}
