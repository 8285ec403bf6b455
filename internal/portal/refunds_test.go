package portal_test

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

var (
	refundRE  = regexp.MustCompile(`id="refund-(re_[0-9A-Za-z]+)"`)
	formKeyRE = regexp.MustCompile(`name="idempotency_key" value="([^"]+)"`)
)

// formKey reads the refund form's idempotency key from a rendered page.
func formKey(t *testing.T, pg *apptest.Page) string {
	t.Helper()
	m := formKeyRE.FindStringSubmatch(pg.Body)
	if m == nil {
		t.Fatalf("no idempotency_key in the form: %.1500s", pg.Body)
	}
	return m[1]
}

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
		form := admin.Get(path)
		form.Contains(t, `id="refund-form"`, `name="amount_minor"`, `name="reason"`)
		key := formKey(t, form)

		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"abc"}, "idempotency_key": {key}}); pg.Status != 400 {
			t.Fatalf("bad amount: %d", pg.Status)
		} else {
			pg.Contains(t, "amount_invalid", `id="f-amount_minor-error"`)
		}
		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"300"}}); pg.Status != 400 {
			t.Fatalf("no form key: %d", pg.Status)
		} else {
			pg.Contains(t, "This form is out of date")
		}
		// The form submitted twice (a double click, a re-post) makes one
		// refund; its key with another amount is refused.
		for i := 0; i < 2; i++ {
			if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"300"}, "reason": {"requested_by_customer"}, "idempotency_key": {key}}); pg.Status != 303 {
				t.Fatalf("refund, submission %d: %d %.500s", i+1, pg.Status, pg.Body)
			}
		}
		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"301"}, "reason": {"requested_by_customer"}, "idempotency_key": {key}}); pg.Status != 422 {
			t.Fatalf("the form's key with another amount: %d", pg.Status)
		}
		if in := e.Get("/v1/payment_intents/" + pi).Map(t); in["amount_refunded_minor"] != float64(300) {
			t.Fatalf("after a double submission: %v", in)
		}
		page := admin.Get(path)
		page.Contains(t, "refund.succeeded", "requested_by_customer", `id="intent-refunded"`)
		if n := len(refundRE.FindAllString(page.Body, -1)); n != 1 {
			t.Fatalf("%d refunds listed after a double submission, want 1", n)
		}

		if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"600"}, "idempotency_key": {formKey(t, page)}}); pg.Status != 303 {
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
		if got := viewer.Post(path+"/refunds", url.Values{"amount_minor": {"1"}, "idempotency_key": {"pfk_viewer"}}); got.Status != 403 {
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

// TestNoSelfApprovalThroughAMadeUser: an admin asks for a refund over the
// threshold, makes a user on the users page and signs in as that user: the
// approval is refused, self_approval_not_allowed, on the page and in the
// API's store. A user the admin made before the request approves.
// (Before, the made user approved the admin's own refund.)
func TestNoSelfApprovalThroughAMadeUser(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 5000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		pi, _ := r.Map(t)["id"].(string)
		if c := e.Post("/v1/payment_intents/"+pi+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
		if s := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 500}); s.Status != 200 {
			t.Fatalf("settings: %d", s.Status)
		}
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		makeUser := func(email string) *apptest.Portal {
			admin.Get("/portal/test/users")
			if pg := admin.Post("/portal/test/users", url.Values{"email": {email}, "password": {"made-by-admin-1"}, "role": {"approver"}}); pg.Status != 303 {
				t.Fatalf("create user: %d %.300s", pg.Status, pg.Body)
			}
			u := e.NewPortal()
			setOwnPassword(t, u, email, "made-by-admin-1", "own-password-1")
			return u
		}
		before := makeUser("made-before@example.com")
		path := "/portal/test/payment_intents/" + pi
		refund := func() string {
			page := admin.Get(path)
			if pg := admin.Post(path+"/refunds", url.Values{"amount_minor": {"600"}, "idempotency_key": {formKey(t, page)}}); pg.Status != 303 {
				t.Fatalf("refund over the threshold: %d %.300s", pg.Status, pg.Body)
			}
			m := refundRE.FindStringSubmatch(admin.Get(path).Body)
			if m == nil {
				t.Fatal("no refund listed")
			}
			return m[1]
		}
		first := refund()
		after := makeUser("made-after@example.com")
		after.Get(path)
		if got := after.Post("/portal/test/refunds/"+first+"/approve", nil); got.Status != 403 {
			t.Fatalf("approval by a user the requester made after the request: %d", got.Status)
		} else {
			got.Contains(t, "self_approval_not_allowed")
		}
		before.Get(path)
		if got := before.Post("/portal/test/refunds/"+first+"/approve", nil); got.Status != 303 {
			t.Fatalf("approval by a user made before the request: %d %.300s", got.Status, got.Body)
		}
	})
}
