package portal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// TestBrowserHostedInvoiceOTP: a customer opens the hosted invoice page of
// an open invoice in Chromium, sees the merchant's name and the amount,
// picks Bank A (an SMS code rail), types the wallet number, pays, types the
// code on the page the payment leads to, and sees the invoice paid. Then
// the invoice is paid once (one invoice.paid, the amount in the merchant's
// balance, the ledger balanced), and the portal's invoice page shows it
// paid. The pages work without JavaScript; the browser only types and
// clicks.
func TestBrowserHostedInvoiceOTP(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) { hostedInvoiceOTP(t, e, browser(t)) })
}

func hostedInvoiceOTP(t *testing.T, e *apptest.Env, b *tab) {
	cus := e.Post("/v1/customers", map[string]any{"name": "Hodan Ali"})
	cusID, _ := cus.Map(t)["id"].(string)
	inv := e.Post("/v1/invoices", map[string]any{"customer": cusID, "currency": "DJF", "collection_method": "send_invoice", "days_until_due": 10,
		"lines": []map[string]any{{"description": "Fibre 100, March", "amount_minor": 4200}}})
	invID, _ := inv.Map(t)["id"].(string)
	fin := e.Post("/v1/invoices/"+invID+"/finalize", nil)
	if fin.Status != 200 {
		t.Fatalf("finalize: %d %s", fin.Status, fin.Body)
	}
	hosted, _ := fin.Map(t)["hosted_invoice_url"].(string)
	if !strings.HasPrefix(hosted, e.URL) {
		t.Fatalf("hosted_invoice_url %q is not on %s", hosted, e.URL)
	}

	b.open(hosted)
	if got := b.text("#merchant"); got != "Test merchant" {
		t.Fatalf("the page is branded %q", got)
	}
	if got := b.text("#status"); !strings.EqualFold(got, "open") {
		t.Fatalf("status %q", got)
	}
	if got := b.text("#amount"); got != "4200 DJF" {
		t.Fatalf("amount %q", got)
	}
	b.shot("hosted-invoice")
	b.do(chromedp.Click(chromedp.ID("rail_bank_a"), chromedp.NodeVisible), chromedp.SendKeys(chromedp.ID("phone"), "+253 77 12 34 56"))
	b.click("#pay")
	b.do(chromedp.WaitVisible(chromedp.ID("otp")))
	b.shot("hosted-invoice-otp")
	b.do(chromedp.SendKeys(chromedp.ID("otp"), "123456"))
	b.click("#confirm")
	if !b.waitText("status", "paid", 20*time.Second) {
		t.Fatalf("the page does not show the invoice paid: status %q", b.text("#status"))
	}
	if got := b.text("#paid"); !strings.HasPrefix(got, "Paid") {
		t.Fatalf("paid note %q", got)
	}
	b.shot("hosted-invoice-paid")

	got := e.Get("/v1/invoices/" + invID).Map(t)
	if got["status"] != "paid" || got["amount_paid"] != float64(4200) || got["payment_intent"] == nil {
		t.Fatalf("invoice after the page: %v", got)
	}
	var paidEvents int
	if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'invoice.paid'", invID).Scan(&paidEvents); err != nil || paidEvents != 1 {
		t.Fatalf("%d invoice.paid events (%v), want 1", paidEvents, err)
	}
	bs, err := ledger.Balances(context.Background(), e.Main.DB, e.Merchant.MerchantID, false)
	if err != nil {
		t.Fatal(err)
	}
	var avail int64
	for _, bal := range bs {
		if bal.Currency == "DJF" {
			avail = bal.Available
		}
	}
	if avail != 4200 {
		t.Fatalf("available %d, want 4200", avail)
	}
	if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
		t.Fatal(err)
	}

	b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
	b.open(e.URL + "/portal/test/invoices/" + invID)
	if got := b.text("#invoice-status"); got != "paid" {
		t.Fatalf("portal invoice status %q", got)
	}
	b.shot("portal-invoice")
}
