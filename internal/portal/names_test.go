package portal_test

import (
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestNamesOverIds: where a page shows who did something or whose it is,
// it shows the key's masked display or the customer's name, keeping the id
// beside it (a title or a code), never the bare id alone.
func TestNamesOverIds(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Post("/v1/customers", map[string]any{"name": "Hodan Ali", "email": "hodan@example.com"})
		cus, _ := r.Map(t)["id"].(string)
		r = e.Post("/v1/invoices", map[string]any{"customer": cus, "currency": "DJF",
			"lines": []map[string]any{{"description": "Installation", "amount_minor": 900}}})
		inv, _ := r.Map(t)["id"].(string)
		if cus == "" || inv == "" {
			t.Fatalf("customer %q, invoice %q: %s", cus, inv, r.Body)
		}
		topupFor(t, e)
		csv := "amount,currency,provider,recipient_msisdn,recipient_account,recipient_name,description,external_ref\n" +
			"1500,DJF,wallet_b,+25377000001,,Amina Hassan,June,emp-1\n"
		b := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk", Key: e.SK, Body: csv,
			Headers: map[string]string{"Idempotency-Key": "names-batch", "Content-Type": "text/csv"}})
		batch, _ := b.Map(t)["id"].(string)
		if batch == "" {
			t.Fatalf("batch: %d %s", b.Status, b.Body)
		}
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/invoices").Contains(t, `title="`+cus+`">Hodan Ali</a>`)
		p.Get("/portal/test/invoices/"+inv).Contains(t, ">Hodan Ali</a> <code>"+cus+"</code>")
		page := string(p.Get("/portal/test/batches/" + batch).Body)
		if !strings.Contains(page, "secret key sk_test_…") {
			t.Fatalf("the batch page does not name the key that created it:\n%.2000s", page)
		}
	})
}

func topupFor(t *testing.T, e *apptest.Env) {
	t.Helper()
	if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 1_000_000}); r.Status != 201 {
		t.Fatalf("topup: %d %s", r.Status, r.Body)
	}
}
