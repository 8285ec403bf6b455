package portal_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

var clockPathRE = regexp.MustCompile(`^/portal/test/test_clocks/(clock_[0-9A-Za-z]+)\?done=clock_created$`)

// auditCount counts the merchant's audit rows of an action with an outcome.
func auditCount(t *testing.T, e *apptest.Env, action, objectID, outcome string) int {
	t.Helper()
	var n int
	if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM portal_audit WHERE merchant_id = ? AND action = ? AND object_id = ? AND outcome = ?",
		e.Merchant.MerchantID, action, objectID, outcome).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBillingActions: in test mode the portal creates and advances a test
// clock (to a date, +1 day, +1 month; a date before the clock's time is
// refused on its field), cancels a subscription at its period's end and
// then now, and finalizes, marks uncollectible, pays and voids invoices,
// each form once however often it is posted, each through the billing
// service (the API sees the result) and each in the audit log. A viewer
// gets 403 and changes nothing; live mode has no clock pages and refuses
// the actions.
func TestBillingActions(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)

		// A test clock.
		list := admin.Get("/portal/test/test_clocks")
		list.Contains(t, `id="clock-create"`, "No test clocks.")
		key := formKey(t, list)
		if pg := admin.Post("/portal/test/test_clocks", url.Values{"name": {"March run"}, "frozen_time": {"31/01/2027"}, "idempotency_key": {key}}); pg.Status != 400 {
			t.Fatalf("bad date: %d", pg.Status)
		} else {
			pg.Contains(t, `id="f-frozen_time-error"`, `value="March run"`)
		}
		made := admin.Post("/portal/test/test_clocks", url.Values{"name": {"March run"}, "frozen_time": {"2027-01-31"}, "idempotency_key": {key}})
		m := clockPathRE.FindStringSubmatch(made.Location)
		if made.Status != 303 || m == nil {
			t.Fatalf("create clock: %d %q", made.Status, made.Location)
		}
		clock := m[1]
		if again := admin.Post("/portal/test/test_clocks", url.Values{"name": {"March run"}, "frozen_time": {"2027-01-31"}, "idempotency_key": {key}}); again.Location != made.Location {
			t.Fatalf("the same form again: %d %q", again.Status, again.Location)
		}
		if got := e.Get("/v1/test_helpers/test_clocks").Map(t)["data"].([]any); len(got) != 1 {
			t.Fatalf("%d clocks after one form posted twice", len(got))
		}
		page := admin.Get("/portal/test/test_clocks/" + clock)
		page.Contains(t, `id="clock-time">2027-01-31 00:00:00 UTC`, `id="clock-status">ready`, "March run", `id="advance-month"`)

		cus := e.Post("/v1/customers", map[string]any{"name": "Clocked", "test_clock": clock,
			"default_payment": map[string]any{"provider": "bank_a", "customer_msisdn": "+25377123456"}}).Map(t)["id"].(string)
		subR := e.Post("/v1/subscriptions", map[string]any{"customer": cus, "currency": "DJF", "interval": "month",
			"collection_method": "send_invoice", "days_until_due": 7,
			"items": []map[string]any{{"description": "Fibre 100", "amount_minor": 1500, "quantity": 1}}})
		if subR.Status/100 != 2 {
			t.Fatalf("subscription: %d %s", subR.Status, subR.Body)
		}
		sub := subR.Map(t)["id"].(string)
		first, _ := subR.Map(t)["latest_invoice"].(string)

		// Backwards is refused on its field.
		if pg := admin.Post("/portal/test/test_clocks/"+clock+"/advance", url.Values{"frozen_time": {"2026-01-01"}, "idempotency_key": {formKey(t, page)}}); pg.Status != 400 {
			t.Fatalf("advance backwards: %d", pg.Status)
		} else {
			pg.Contains(t, `id="f-frozen_time-error"`, "only moves forward")
		}
		page = admin.Get("/portal/test/test_clocks/" + clock)
		stepKey := regexp.MustCompile(`id="clock-step">\s*<input type="hidden" name="csrf_token" value="[^"]*">\s*<input type="hidden" name="idempotency_key" value="([^"]+)"`).FindStringSubmatch(page.Body)
		if stepKey == nil {
			t.Fatalf("no step form key: %.2000s", page.Body)
		}
		if pg := admin.Post("/portal/test/test_clocks/"+clock+"/advance", url.Values{"step": {"month"}, "idempotency_key": {stepKey[1]}}); pg.Status != 303 {
			t.Fatalf("+1 month: %d %.800s", pg.Status, pg.Body)
		}
		// The same form again does not advance a second month.
		admin.Post("/portal/test/test_clocks/"+clock+"/advance", url.Values{"step": {"month"}, "idempotency_key": {stepKey[1]}})
		if err := e.Main.Billing().RunAdvance(context.Background(), clock); err != nil {
			t.Fatal(err)
		}
		waitPage(t, admin, "/portal/test/test_clocks/"+clock, `id="clock-status">ready`).Contains(t, `id="clock-time">2027-02-28 00:00:00 UTC`)
		if got := auditCount(t, e, "test_clock.advance", clock, "ok"); got != 2 {
			t.Fatalf("%d test_clock.advance audit rows, want 2 (each post is recorded; the second replayed the first)", got)
		}
		if latest, _ := e.Get("/v1/subscriptions/" + sub).Map(t)["latest_invoice"].(string); latest == "" || latest == first {
			t.Fatalf("the month's advance billed no new period: latest %q, first %q", latest, first)
		}

		// Cancel at the period's end, then now.
		sp := admin.Get("/portal/test/subscriptions/" + sub)
		sp.Contains(t, `id="cancel-now"`, `id="cancel-period-end"`)
		keys := formKeyRE.FindAllStringSubmatch(sp.Body, -1)
		if len(keys) != 2 {
			t.Fatalf("%d cancel forms", len(keys))
		}
		if pg := admin.Post("/portal/test/subscriptions/"+sub+"/cancel", url.Values{"when": {"someday"}, "idempotency_key": {keys[1][1]}}); pg.Status != 400 {
			t.Fatalf("bad when: %d", pg.Status)
		} else {
			pg.Contains(t, `id="f-when-error"`)
		}
		if pg := admin.Post("/portal/test/subscriptions/"+sub+"/cancel", url.Values{"when": {"period_end"}, "idempotency_key": {keys[1][1]}}); pg.Status != 303 {
			t.Fatalf("cancel at period end: %d %.500s", pg.Status, pg.Body)
		}
		if got := e.Get("/v1/subscriptions/" + sub).Map(t); got["cancel_at_period_end"] != true || got["status"] == "canceled" {
			t.Fatalf("after cancel at period end: %v", got)
		}
		if pg := admin.Post("/portal/test/subscriptions/"+sub+"/cancel", url.Values{"when": {"now"}, "idempotency_key": {keys[0][1]}}); pg.Status != 303 {
			t.Fatalf("cancel now: %d %.500s", pg.Status, pg.Body)
		}
		if got := e.Get("/v1/subscriptions/" + sub).Map(t)["status"]; got != "canceled" {
			t.Fatalf("after cancel now: %v", got)
		}
		admin.Get("/portal/test/subscriptions/"+sub).Contains(t, `id="subscription-status">canceled`)
		if strings.Contains(admin.Get("/portal/test/subscriptions/"+sub).Body, `id="cancel-now"`) {
			t.Fatal("a canceled subscription offers to cancel")
		}

		// Invoices: finalize (twice: once), mark uncollectible, pay, void.
		inv := e.Post("/v1/invoices", map[string]any{"customer": cus, "currency": "DJF",
			"lines": []map[string]any{{"description": "Installation", "amount_minor": 900}}}).Map(t)["id"].(string)
		ip := admin.Get("/portal/test/invoices/" + inv)
		ip.Contains(t, `id="invoice-finalize"`)
		fk := formKey(t, ip)
		for range 2 {
			if pg := admin.Post("/portal/test/invoices/"+inv+"/finalize", url.Values{"idempotency_key": {fk}}); pg.Status != 303 {
				t.Fatalf("finalize: %d %.500s", pg.Status, pg.Body)
			}
		}
		var finalized int
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'invoice.finalized'", inv).Scan(&finalized); err != nil || finalized != 1 {
			t.Fatalf("%d invoice.finalized (%v), want 1", finalized, err)
		}
		ip = admin.Get("/portal/test/invoices/" + inv)
		ip.Contains(t, `id="invoice-status">open`, `id="invoice-pay"`, `id="invoice-void"`, `id="invoice-uncollectible"`)
		act := func(action string, want int) *apptest.Page {
			t.Helper()
			pg := admin.Get("/portal/test/invoices/" + inv)
			m := regexp.MustCompile(`action="/portal/test/invoices/` + inv + `/` + action + `">` +
				`<input type="hidden" name="csrf_token" value="[^"]*"><input type="hidden" name="idempotency_key" value="([^"]+)"`).FindStringSubmatch(pg.Body)
			k := "pfk_missing"
			if m != nil {
				k = m[1]
			}
			out := admin.Post("/portal/test/invoices/"+inv+"/"+action, url.Values{"idempotency_key": {k}})
			if out.Status != want {
				t.Fatalf("%s: %d, want %d: %.800s", action, out.Status, want, out.Body)
			}
			return out
		}
		act("mark_uncollectible", 303)
		admin.Get("/portal/test/invoices/"+inv).Contains(t, `id="invoice-status">uncollectible`, `id="invoice-pay"`)
		act("pay", 303)
		var intents int
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM payment_intents WHERE invoice_id = ?", inv).Scan(&intents); err != nil || intents != 1 {
			t.Fatalf("pay made %d payment intents (%v), want 1", intents, err)
		}
		act("void", 303)
		admin.Get("/portal/test/invoices/"+inv).Contains(t, `id="invoice-status">void`, "A void invoice has no further actions.")
		// A refused action shows the page with its error.
		if pg := admin.Post("/portal/test/invoices/"+inv+"/finalize", url.Values{"idempotency_key": {"pfk_late"}}); pg.Status != 409 {
			t.Fatalf("finalize a void invoice: %d", pg.Status)
		} else {
			pg.Contains(t, `id="page-error"`, "only a draft can be finalized", `id="invoice-status">void`)
		}
		for _, a := range []string{"invoice.finalize", "invoice.mark_uncollectible", "invoice.pay", "invoice.void"} {
			if got := auditCount(t, e, a, inv, "ok"); got < 1 {
				t.Fatalf("no ok audit row for %s", a)
			}
		}

		// A viewer reads but cannot act.
		viewer := newUser(t, e, "viewer-billing@example.com", "viewer")
		vp := viewer.Get("/portal/test/invoices/" + inv)
		if strings.Contains(vp.Body, `id="invoice-actions"`) || strings.Contains(viewer.Get("/portal/test/test_clocks").Body, `id="clock-create"`) {
			t.Fatal("a viewer is offered billing actions")
		}
		if pg := viewer.Post("/portal/test/test_clocks/"+clock+"/advance", url.Values{"step": {"day"}, "idempotency_key": {"pfk_viewer"}}); pg.Status != 403 {
			t.Fatalf("a viewer advances a clock: %d", pg.Status)
		} else {
			pg.Contains(t, "permission_denied")
		}

		// Live mode hides them.
		if pg := admin.Get("/portal/live/test_clocks"); pg.Status != 404 {
			t.Fatalf("live test clocks: %d", pg.Status)
		}
		if strings.Contains(admin.Get("/portal/live/invoices").Body, `id="tab-test-clocks"`) {
			t.Fatal("live mode links test clocks")
		}
		admin.Get("/portal/live/")
		if pg := admin.Post("/portal/live/invoices/"+inv+"/void", url.Values{"idempotency_key": {"pfk_live"}}); pg.Status != 403 {
			t.Fatalf("a live billing action: %d", pg.Status)
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}
