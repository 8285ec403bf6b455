package portal_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// billedCustomer makes, with key, a customer with email and metadata, a
// subscription, and an invoice paid through a payment intent; it returns
// their ids: customer, subscription, invoice, intent.
func billedCustomer(t *testing.T, e *apptest.Env, key, name, email string, md map[string]string) (string, string, string, string) {
	t.Helper()
	post := func(path string, body any) map[string]any {
		t.Helper()
		r := e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body, Headers: map[string]string{"Idempotency-Key": "k-" + path + "-" + email}})
		if r.Status/100 != 2 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r.Map(t)
	}
	cus := post("/v1/customers", map[string]any{"name": name, "email": email, "metadata": md,
		"default_payment": map[string]any{"provider": "bank_a", "customer_msisdn": "+25377123456"}})["id"].(string)
	sub := post("/v1/subscriptions", map[string]any{"customer": cus, "currency": "DJF", "interval": "month",
		"collection_method": "send_invoice", "days_until_due": 7, "metadata": md,
		"items": []map[string]any{{"description": "Fibre 100", "amount_minor": 1500, "quantity": 1}}})["id"].(string)
	inv := post("/v1/invoices", map[string]any{"customer": cus, "currency": "DJF",
		"lines": []map[string]any{{"description": "Installation", "amount_minor": 900}}})["id"].(string)
	post("/v1/invoices/"+inv+"/finalize", nil)
	pi, _ := post("/v1/invoices/"+inv+"/pay", nil)["payment_intent"].(string)
	if pi == "" {
		t.Fatal("the invoice's payment made no intent")
	}
	return cus, sub, inv, pi
}

// TestSearch: the header's search box. An id of the merchant's goes to its
// page (a refund's to its payment's); an id of another merchant's, or of
// the other mode, finds nothing, exactly like an unknown one. An e-mail
// address (any case) finds the customer, its subscription, invoice and the
// payment the invoice made; key:value finds metadata; text finds names and
// descriptions. Another merchant's objects with the same e-mail, metadata
// and names never show, nor do test objects in live mode. A query over the
// length cap or too short is 400 on the field q.
func TestSearch(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		md := map[string]string{"crm": "A-17", "plan": "fibre"}
		cus, sub, inv, pi := billedCustomer(t, e, e.SK, "Hodan Ali", "Hodan@Example.com", md)
		desc := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 4200, "currency": "DJF", "provider": "bank_a",
			"customer_msisdn": "77123456", "description": "Wedding hall deposit", "metadata": map[string]string{"order": "ord_42%"}})
		if desc.Status != 201 && desc.Status != 200 {
			t.Fatalf("intent: %d %s", desc.Status, desc.Body)
		}
		descPI := desc.Map(t)["id"].(string)
		if c := e.Post("/v1/payment_intents/"+descPI+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
		ref := e.Post("/v1/refunds", map[string]any{"payment_intent": descPI, "amount_minor": 200})
		if ref.Status/100 != 2 {
			t.Fatalf("refund: %d %s", ref.Status, ref.Body)
		}
		re := ref.Map(t)["id"].(string)

		other := e.NewMerchant(merchants.CreateParams{Name: "Other shop"})
		oCus, oSub, oInv, oPI := billedCustomer(t, e, other.SecretKeys[0], "Hodan Ali", "hodan@example.com", md)

		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/").Contains(t, `id="search-box"`, `action="/portal/test/search"`)
		search := func(mode, q string) *apptest.Page {
			t.Helper()
			return p.Get("/portal/" + mode + "/search?q=" + url.QueryEscape(q))
		}
		lacks := func(pg *apptest.Page, s ...string) {
			t.Helper()
			for _, x := range s {
				if strings.Contains(pg.Body, x) {
					t.Fatalf("the page shows %q:\n%.2000s", x, pg.Body)
				}
			}
		}

		// Ids go to their page.
		for id, want := range map[string]string{cus: "/portal/test/customers/" + cus, sub: "/portal/test/subscriptions/" + sub,
			inv: "/portal/test/invoices/" + inv, pi: "/portal/test/payment_intents/" + pi,
			re: "/portal/test/payment_intents/" + descPI + "#refund-" + re, " " + descPI + " ": "/portal/test/payment_intents/" + descPI} {
			if pg := search("test", id); pg.Status != 303 || pg.Location != want {
				t.Fatalf("search %q: %d %q, want 303 %s", id, pg.Status, pg.Location, want)
			}
		}
		// Another merchant's ids, and this merchant's in the other mode,
		// are not found.
		for _, id := range []string{oCus, oSub, oInv, oPI, "pi_doesnotexist"} {
			pg := search("test", id)
			if pg.Status != 200 {
				t.Fatalf("search for another merchant's %s: %d %s", id, pg.Status, pg.Location)
			}
			pg.Contains(t, `id="search-none"`)
		}
		for _, id := range []string{cus, pi, re} {
			pg := search("live", id)
			if pg.Status != 200 {
				t.Fatalf("a test id in live mode: %d %s", pg.Status, pg.Location)
			}
			pg.Contains(t, `id="search-none"`)
		}

		// An e-mail address, whatever its case.
		pg := search("test", "HODAN@example.COM")
		pg.Contains(t, `id="search-customers"`, cus, `id="search-subscriptions"`, sub, `id="search-invoices"`, inv,
			`id="search-payment_intents"`, pi, "DJF 900")
		lacks(pg, oCus, oSub, oInv, oPI, descPI)
		lacks(search("live", "hodan@example.com"), cus, oCus)

		// Metadata.
		pg = search("test", "crm:A-17")
		pg.Contains(t, `id="search-customers"`, cus, `id="search-subscriptions"`, sub)
		lacks(pg, oCus, oSub, pi)
		lacks(search("test", "crm:A-1"), cus, sub) // the whole value, not a part
		search("test", "order:ord_42%").Contains(t, descPI)
		lacks(search("test", "order:ord_4%"), descPI) // % and _ are not wildcards
		lacks(search("live", "crm:A-17"), cus, oCus)

		// Text.
		pg = search("test", "hodan")
		pg.Contains(t, `id="search-customers"`, cus)
		lacks(pg, oCus)
		pg = search("test", "WEDDING hall")
		pg.Contains(t, `id="search-payment_intents"`, descPI, "DJF 4,200")
		lacks(pg, pi)
		lacks(search("live", "wedding"), descPI)

		// Bounds: the field at fault is named.
		for _, q := range []string{strings.Repeat("a", 201), "x"} {
			if pg := search("test", q); pg.Status != 400 {
				t.Fatalf("search %.20q: %d", q, pg.Status)
			} else {
				pg.Contains(t, `id="f-q-error"`, `aria-invalid="true"`)
			}
		}

		// The other merchant finds its own only.
		q := e.NewPortal()
		q.Login(other.Portal.Email, other.Portal.Password)
		pg = q.Get("/portal/test/search?q=" + url.QueryEscape("hodan@example.com"))
		pg.Contains(t, oCus, oInv, oPI)
		lacks(pg, cus, inv, pi)
		if pg := q.Get("/portal/test/search?q=" + cus); pg.Status != 200 {
			t.Fatalf("another merchant's customer id: %d %s", pg.Status, pg.Location)
		}
	})
}

// TestSearchMetadataPastFirstCandidates: a metadata search finds its match
// behind more than a page (searchPerType + 1) of newer objects whose
// metadata is nearly the same (another case, which SQLite's LIKE ignores):
// the exact match is the query's own condition, not a check after its
// LIMIT. (Before, the newest near misses filled the LIMIT and the match
// was dropped.)
func TestSearchMetadataPastFirstCandidates(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		intent := func(plan string) string {
			t.Helper()
			r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "bank_a",
				"customer_msisdn": "77123456", "metadata": map[string]string{"plan": plan}})
			if r.Status/100 != 2 {
				t.Fatalf("intent: %d %s", r.Status, r.Body)
			}
			return r.Map(t)["id"].(string)
		}
		match := intent("gold")
		var near []string
		for range 12 {
			near = append(near, intent("GOLD"))
		}
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		pg := p.Get("/portal/test/search?q=" + url.QueryEscape("plan:gold"))
		pg.Contains(t, `id="search-payment_intents"`, match)
		for _, id := range near {
			if strings.Contains(pg.Body, id) {
				t.Fatalf("plan:gold shows %s, whose plan is GOLD", id)
			}
		}
		pg = p.Get("/portal/test/search?q=" + url.QueryEscape("plan:GOLD"))
		pg.Contains(t, near[len(near)-1])
		if strings.Contains(pg.Body, match) {
			t.Fatalf("plan:GOLD shows %s, whose plan is gold", match)
		}
	})
}
