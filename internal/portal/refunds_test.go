package portal_test

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

var refundRE = regexp.MustCompile(`id="refund-(re_[0-9A-Za-z]+)"`)

// TestRefundPages: the payment intent page refunds through a form; over the
// approval threshold the refund waits, its creator's approval is refused
// (self_approval_not_allowed on the page), a second user approves it; the
// refunds and their events show on the intent's page; a viewer cannot refund.
func TestRefundPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		pi, _ := r.Map(t)["id"].(string)
		if c := e.Post("/v1/payment_intents/"+pi+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
		if s := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 500}); s.Status != 200 {
			t.Fatalf("settings: %d", s.Status)
		}
		path := "/portal/test/payment_intents/" + pi
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get(path).Contains(t, `id="refund-form"`, `name="amount_minor"`, `name="reason"`)

		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"abc"}}); pg.Status != 400 {
			t.Fatalf("bad amount: %d", pg.Status)
		} else {
			pg.Contains(t, "amount_invalid", `id="f-amount_minor-error"`)
		}
		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"300"}, "reason": {"requested_by_customer"}}); pg.Status != 303 {
			t.Fatalf("refund: %d %.500s", pg.Status, pg.Body)
		}
		admin.Get(path).Contains(t, "refund.succeeded", "requested_by_customer", `id="intent-refunded"`)

		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"600"}}); pg.Status != 303 {
			t.Fatalf("refund over the threshold: %d %.500s", pg.Status, pg.Body)
		}
		pg := admin.Get(path + "?done=refund_requires_approval")
		pg.Contains(t, "requires_approval", "another user or key must approve it")
		var waiting string // refunds are listed newest first
		if m := refundRE.FindStringSubmatch(pg.Body); m != nil {
			waiting = m[1]
		}
		if waiting == "" {
			t.Fatalf("no refund listed: %.1500s", pg.Body)
		}
		if got := admin.Post("/portal/test/refunds/"+waiting+"/approve", nil); got.Status != 403 {
			t.Fatalf("self-approval: %d", got.Status)
		} else {
			got.Contains(t, "self_approval_not_allowed")
		}
		viewer := newUser(t, e, "viewer-refunds@example.com", "viewer")
		viewer.Get(path)
		if got := viewer.Post(path+"/refunds", url.Values{"amount_minor": {"1"}}); got.Status != 403 {
			t.Fatalf("viewer refund: %d", got.Status)
		}
		approver := newUser(t, e, "approver-refunds@example.com", "approver")
		approver.Get(path)
		if got := approver.Post("/portal/test/refunds/"+waiting+"/approve", nil); got.Status != 303 {
			t.Fatalf("second user's approval: %d %.500s", got.Status, got.Body)
		}
		in := e.Get("/v1/payment_intents/" + pi).Map(t)
		if in["amount_refunded_minor"] != float64(900) {
			t.Fatalf("intent after approval: %v", in)
		}
		approver.Get(path).Contains(t, "refund.created", "refund.succeeded")
		admin.Get("/portal/test/audit").Contains(t, "refund.create", "refund.approve", "self_approval_not_allowed")
		if err := ledger.Verify(t.Context(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}
