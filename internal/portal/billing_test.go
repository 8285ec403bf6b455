package portal_test

import (
	"context"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
)

var hostedLinkRE = regexp.MustCompile(`href="([^"]+)" id="hosted-link"`)

// TestBillingPages: the customers, subscriptions and invoices lists and
// pages show what billing holds, with their timelines; a paid invoice's page
// and an open one's show what the customer sees on the hosted invoice page
// (the merchant's name, the amount, the ways to pay, the link); a bad
// filter is a 400 on its field; another merchant gets 404.
func TestBillingPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		id := func(r *apptest.Response, what string) string {
			t.Helper()
			if r.Status/100 != 2 {
				t.Fatalf("%s: %d %s", what, r.Status, r.Body)
			}
			s, _ := r.Map(t)["id"].(string)
			return s
		}
		cus := id(e.Post("/v1/customers", map[string]any{"name": "Hodan Ali", "email": "hodan@example.com", "phone": "+25377123456",
			"default_payment": map[string]any{"provider": "bank_a", "customer_msisdn": "+25377123456"}}), "customer")
		sub := id(e.Post("/v1/subscriptions", map[string]any{"customer": cus, "currency": "DJF", "interval": "month",
			"collection_method": "send_invoice", "days_until_due": 7,
			"items": []map[string]any{{"description": "Fibre 100", "amount_minor": 1500, "quantity": 2}}}), "subscription")
		inv := id(e.Post("/v1/invoices", map[string]any{"customer": cus, "currency": "DJF",
			"lines": []map[string]any{{"description": "Installation", "amount_minor": 900}}}), "invoice")
		id(e.Post("/v1/invoices/"+inv+"/finalize", nil), "finalize")
		paying := e.Post("/v1/invoices/"+inv+"/pay", nil)
		pi, _ := paying.Map(t)["payment_intent"].(string)
		if paying.Status != 200 || pi == "" {
			t.Fatalf("pay: %d %s", paying.Status, paying.Body)
		}
		if r := e.Post("/v1/payment_intents/"+pi+"/confirm", map[string]string{"otp": "123456"}); r.Status != 200 {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
		open := e.Get("/v1/subscriptions/" + sub).Map(t)["latest_invoice"].(string)

		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/customers").Contains(t, cus, "Hodan Ali", "hodan@example.com", "bank_a")
		p.Get("/portal/test/customers?email=nobody@example.com").Contains(t, "No customers match.")
		p.Get("/portal/test/customers/"+cus).Contains(t, `id="customer-name">Hodan Ali`, sub, inv, open, "customer.created")
		p.Get("/portal/test/subscriptions?customer="+cus).Contains(t, sub, "active")
		p.Get("/portal/test/subscriptions/"+sub).Contains(t, `id="subscription-status">active`, "Fibre 100", "DJF 3,000",
			"send_invoice, due 7 days after finalizing", "customer.subscription.created", open)
		p.Get("/portal/test/invoices?status=paid").Contains(t, inv)
		if pg := p.Get("/portal/test/invoices?status=late"); pg.Status != 400 {
			t.Fatalf("bad status filter: %d", pg.Status)
		} else {
			pg.Contains(t, `id="f-status-error"`)
		}

		paid := p.Get("/portal/test/invoices/" + inv)
		paid.Contains(t, `id="invoice-status">paid`, "Installation", pi, "invoice.finalized", "invoice.paid",
			`id="customer-view"`, `id="preview-merchant">Test merchant`, "The page says the invoice is paid", `id="hosted-link"`)
		openPage := p.Get("/portal/test/invoices/" + open)
		openPage.Contains(t, `id="invoice-status">open`, `id="preview-amount">DJF 3,000`, `id="preview-rails"`, "Bank A (SMS code)", billing.HostedPath+open)

		// The link on the portal is the customer's page: it opens without
		// a session and shows the same invoice.
		link := hostedLinkRE.FindStringSubmatch(openPage.Body)
		if link == nil {
			t.Fatalf("no hosted link on %.2000s", openPage.Body)
		}
		u, err := url.Parse(html.UnescapeString(link[1]))
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: u.RequestURI()}); r.Status != 200 || !strings.Contains(string(r.Body), open) ||
			!strings.Contains(string(r.Body), "Test merchant") {
			t.Fatalf("hosted page from the portal's link: %d %.500s", r.Status, r.Body)
		}

		other := e.NewMerchant(merchants.CreateParams{Name: "Other shop"})
		q := e.NewPortal()
		q.Login(other.Portal.Email, other.Portal.Password)
		for _, path := range []string{"/portal/test/invoices/" + inv, "/portal/test/customers/" + cus, "/portal/test/subscriptions/" + sub} {
			if pg := q.Get(path); pg.Status != 404 {
				t.Fatalf("%s for another merchant: %d", path, pg.Status)
			}
		}
		q.Get("/portal/test/invoices").Contains(t, "No invoices.")
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}
