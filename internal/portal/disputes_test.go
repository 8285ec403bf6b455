package portal_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// disputedPayment records a card-present payment and disputes it through the
// sandbox route; it returns the dispute's id.
func disputedPayment(t *testing.T, e *apptest.Env, amount int64, key string) string {
	t.Helper()
	pr := auth.Principal{ID: "key_terminal", MerchantID: e.Merchant.MerchantID, Kind: "secret"}
	in, err := e.Main.PaymentIntents().RecordCardPresent(context.Background(), store.NoClaim, pr, payments.CardPresent{AmountMinor: amount,
		Currency: "DJF", TerminalID: "term_test", OutletID: "out_1", Brand: "visa", Last4: "4242", EntryMode: "chip",
		Approved: true, AuthCode: "A1B2C3", IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Post("/v1/sandbox/disputes", map[string]any{"payment_intent": in.ID, "reason": "fraudulent"})
	if r.Status != 201 {
		t.Fatalf("dispute: %d %s", r.Status, r.Body)
	}
	id, _ := r.Map(t)["id"].(string)
	return id
}

// TestDisputePages: the list shows the disputes needing a response first,
// with their due dates; the dispute page's evidence form refuses a text over
// the limit next to its field, saves, and submits once however often the
// form is posted; submitted evidence is read-only; the close form accepts a
// loss; a viewer sees no forms and cannot post them.
func TestDisputePages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		dp := disputedPayment(t, e, 4500, "portal-dispute-1")
		other := disputedPayment(t, e, 700, "portal-dispute-2")
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		list := admin.Get("/portal/test/disputes")
		list.Contains(t, `id="needs-response"`, `id="open-`+dp+`"`, `id="open-`+other+`"`, "Evidence due by")
		if !strings.Contains(admin.Get("/portal/test/").Body, `href="/portal/test/disputes"`) {
			t.Error("the menu has no Disputes")
		}

		path := "/portal/test/disputes/" + dp
		page := admin.Get(path)
		page.Contains(t, `id="evidence-form"`, `name="evidence.receipt_text"`, `name="evidence.uncategorized_text"`, `id="close-form"`,
			`id="timeline"`, "dispute.created", "dispute.funds_withdrawn")
		key := formKey(t, page)

		long := strings.Repeat("x", 20001)
		pg := admin.Post(path+"/evidence", url.Values{"evidence.receipt_text": {long}, "evidence.customer_name": {"Amina"}, "idempotency_key": {key}})
		if pg.Status != 400 {
			t.Fatalf("a text over the limit: %d", pg.Status)
		}
		pg.Contains(t, `id="f-receipt_text-error"`, "at most 20000")
		if d := e.Get("/v1/disputes/" + dp).Map(t); d["evidence"].(map[string]any)["customer_name"] != nil {
			t.Fatalf("a refused form saved evidence: %v", d["evidence"])
		}

		if pg := admin.Post(path+"/evidence", url.Values{"evidence.customer_name": {"Amina Hassan"}, "evidence.receipt_text": {"Receipt 1042"},
			"submit": {"false"}, "idempotency_key": {key}}); pg.Status != 303 {
			t.Fatalf("save: %d %.500s", pg.Status, pg.Body)
		}
		saved := admin.Get(path)
		saved.Contains(t, "Amina Hassan", "Receipt 1042", `id="evidence-form"`)
		submitKey := formKey(t, saved)
		for i := 0; i < 2; i++ {
			if pg := admin.Post(path+"/evidence", url.Values{"evidence.customer_name": {"Amina Hassan"}, "evidence.receipt_text": {"Receipt 1042"},
				"evidence.uncategorized_text": {"Delivered and signed for"}, "submit": {"true"}, "idempotency_key": {submitKey}}); pg.Status != 303 {
				t.Fatalf("submit, submission %d: %d %.500s", i+1, pg.Status, pg.Body)
			}
		}
		d := e.Get("/v1/disputes/" + dp).Map(t)
		if d["status"] != "under_review" || d["evidence"].(map[string]any)["uncategorized_text"] != "Delivered and signed for" {
			t.Fatalf("after submitting: %v", d)
		}
		done := admin.Get(path)
		done.Contains(t, `id="evidence"`, "Delivered and signed for", "dispute.updated", "under_review")
		if strings.Contains(done.Body, `id="evidence-form"`) {
			t.Fatal("submitted evidence is still editable")
		}
		if pg := admin.Post(path+"/evidence", url.Values{"evidence.receipt_text": {"changed"}, "idempotency_key": {formKey(t, saved) + "x"}}); pg.Status != 409 {
			t.Fatalf("a change after submitting: %d", pg.Status)
		}
		if n := strings.Count(admin.Get(path).Body, "dispute.updated"); n != 2 {
			t.Fatalf("%d dispute.updated on the timeline, want 2 (save, submit once)", n)
		}

		// A viewer sees the dispute but no forms, and cannot post them.
		if _, err := e.Main.Merchants.CreateUser(context.Background(), e.Merchant.MerchantID, "viewer-d@example.com", "password-viewer-1", "viewer"); err != nil {
			t.Fatal(err)
		}
		v := e.NewPortal()
		v.Login("viewer-d@example.com", "password-viewer-1")
		vp := v.Get("/portal/test/disputes/" + other)
		if vp.Status != 200 || strings.Contains(vp.Body, `id="evidence-form"`) || strings.Contains(vp.Body, `id="close-form"`) {
			t.Fatalf("viewer page: %d", vp.Status)
		}
		if pg := v.Post("/portal/test/disputes/"+other+"/close", url.Values{}); pg.Status != 403 {
			t.Fatalf("viewer close: %d", pg.Status)
		}

		if pg := admin.Post("/portal/test/disputes/"+other+"/close", url.Values{}); pg.Status != 303 {
			t.Fatalf("close: %d %.500s", pg.Status, pg.Body)
		}
		admin.Get("/portal/test/disputes/"+other).Contains(t, "dispute.closed", `id="dispute-status">lost`)
		if body := admin.Get("/portal/test/disputes").Body; strings.Contains(body, `id="open-`+other+`"`) || strings.Contains(body, `id="open-`+dp+`"`) {
			t.Fatal("a dispute no longer needing a response is listed as needing one")
		}
		if pg := admin.Get("/portal/live/disputes/" + dp); pg.Status != 404 {
			t.Fatalf("the test dispute in live mode: %d", pg.Status)
		}
	})
}
