package portal_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// newIntent creates a bank_a intent through the API under a sandbox
// scenario ("" for none) and returns its id.
func newIntent(t *testing.T, e *apptest.Env, amount int, scenario string) string {
	t.Helper()
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("pi-%s-%d-%s", t.Name(), amount, scenario)}
	if scenario != "" {
		h["X-Service-Scenario"] = scenario
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Headers: h,
		Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}})
	if r.Status != 201 {
		t.Fatalf("create intent (%s): %d %s", scenario, r.Status, r.Body)
	}
	return r.Map(t)["id"].(string)
}

var rowRE = regexp.MustCompile(`href="/portal/test/payment_intents/(pi_[0-9A-Z]+)"`)

// TestPaymentPages: the list with its filters and cursor pages, an intent's
// page with its timeline, the dashboard's chart; another merchant's intent
// and the other mode's are 404.
func TestPaymentPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ok1 := newIntent(t, e, 1500, "success")
		ok2 := newIntent(t, e, 2500, "success")
		held := newIntent(t, e, 700, "kyc_blocked")
		open := newIntent(t, e, 900, "")
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)

		all := p.Get("/portal/test/payment_intents")
		if all.Status != 200 || len(rowRE.FindAllString(all.Body, -1)) != 4 {
			t.Fatalf("list: %d, %d rows", all.Status, len(rowRE.FindAllString(all.Body, -1)))
		}
		all.Contains(t, "DJF 1,500", "compliance_review", "requires_action", `<label for="f-status">`)
		succ := p.Get("/portal/test/payment_intents?status=succeeded")
		if ids := rowRE.FindAllStringSubmatch(succ.Body, -1); len(ids) != 2 || ids[0][1] != ok2 || ids[1][1] != ok1 {
			t.Fatalf("succeeded filter, newest first: %v", ids)
		}
		today := e.Main.DB.Now().Format("2006-01-02")
		if pg := p.Get("/portal/test/payment_intents?from=" + today + "&to=" + today + "&provider=bank_a"); len(rowRE.FindAllString(pg.Body, -1)) != 4 {
			t.Fatalf("today's bank_a intents: %d", len(rowRE.FindAllString(pg.Body, -1)))
		}
		dated := p.Get("/portal/test/payment_intents?limit=2&from=" + today + "&to=" + today)
		d1 := rowRE.FindAllStringSubmatch(dated.Body, -1)
		if len(d1) != 2 || d1[0][1] != open || strings.Contains(dated.Body, `rel="prev"`) {
			t.Fatalf("first dated page: %v", d1)
		}
		d2 := rowRE.FindAllStringSubmatch(p.Get("/portal/test/payment_intents?limit=2&from="+today+"&to="+today+"&starting_after="+d1[1][1]).Body, -1)
		if len(d2) != 2 || d2[1][1] != ok1 {
			t.Fatalf("second dated page: %v", d2)
		}
		if pg := p.Get("/portal/test/payment_intents?from=" + "2099-01-01"); len(rowRE.FindAllString(pg.Body, -1)) != 0 {
			t.Fatal("a future from date matched intents")
		}
		bad := p.Get("/portal/test/payment_intents?from=yesterday&status=paid")
		if bad.Status != http.StatusBadRequest {
			t.Fatalf("bad filters: %d", bad.Status)
		}
		bad.Contains(t, `id="f-from-error"`)

		// Cursor pages of two.
		first := p.Get("/portal/test/payment_intents?limit=2")
		ids := rowRE.FindAllStringSubmatch(first.Body, -1)
		if len(ids) != 2 || ids[0][1] != open || !strings.Contains(first.Body, `rel="next"`) {
			t.Fatalf("first page: %v", ids)
		}
		second := p.Get("/portal/test/payment_intents?limit=2&starting_after=" + ids[1][1])
		ids2 := rowRE.FindAllStringSubmatch(second.Body, -1)
		if len(ids2) != 2 || ids2[0][1] != ok2 || ids2[1][1] != ok1 || !strings.Contains(second.Body, `rel="prev"`) {
			t.Fatalf("second page: %v", ids2)
		}

		one := p.Get("/portal/test/payment_intents/" + ok1)
		one.Contains(t, ok1, "DJF 1,500", `id="timeline"`, "payment_intent.created", "payment_intent.succeeded", "status succeeded")
		p.Get("/portal/test/payment_intents/"+held).Contains(t, "compliance_review")

		dash := p.Get("/portal/test/")
		dash.Contains(t, "<svg", "bank_a", "DJF 4,000", "2 of 4 succeeded", "payment_intent.succeeded")

		// Not this mode's, not this merchant's: 404, the same page.
		if pg := p.Get("/portal/live/payment_intents/" + ok1); pg.Status != http.StatusNotFound {
			t.Fatalf("test intent in live mode: %d", pg.Status)
		}
		if pg := p.Get("/portal/live/payment_intents"); strings.Contains(pg.Body, ok1) {
			t.Fatal("test intents listed in live mode")
		}
		c2 := e.NewMerchant(merchants.CreateParams{Name: "Other"})
		q := e.NewPortal()
		q.Login(c2.Portal.Email, c2.Portal.Password)
		nf := q.Get("/portal/test/payment_intents/" + ok1)
		if nf.Status != http.StatusNotFound || strings.Contains(nf.Body, "1,500") {
			t.Fatalf("another merchant's intent: %d", nf.Status)
		}
		if missing := q.Get("/portal/test/payment_intents/pi_doesnotexist"); missing.Status != nf.Status {
			t.Fatal("another merchant's intent is told apart from a missing one")
		}
		if pg := q.Get("/portal/test/payment_intents"); strings.Contains(pg.Body, ok1) {
			t.Fatal("another merchant's intents listed")
		}
	})
}
