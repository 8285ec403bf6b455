package portal_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// keyOf reads the idempotency key of the form with the given id.
func keyOf(t *testing.T, pg *apptest.Page, formID string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)id="` + formID + `".*?name="idempotency_key" value="([^"]+)"`).FindStringSubmatch(pg.Body)
	if m == nil {
		t.Fatalf("no idempotency_key in #%s: %.1500s", formID, pg.Body)
	}
	return m[1]
}

// TestIntentCaptureAndCancelPages: the payment intent page captures a held
// card authorisation (once, however often its form is submitted) and
// cancels a waiting intent; a refused capture shows its error on the page.
func TestIntentCaptureAndCancelPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "USD", "provider": "wallet_a",
			"capture_method": "manual", "return_url": "http://merchant.example/return", "metadata": map[string]string{"wallet_a_mode": "card"}})
		in := r.Map(t)
		pi, _ := in["id"].(string)
		next, _ := in["next_action"].(map[string]any)
		page, _ := next["redirect_url"].(string)
		c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.PostForm(page, url.Values{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
		if err != nil || resp.StatusCode != 303 {
			t.Fatalf("card page: %v %v", resp, err)
		}
		resp.Body.Close()

		path := "/portal/test/payment_intents/" + pi
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		form := admin.Get(path)
		form.Contains(t, `id="capture-form"`, `id="cancel-form"`, `id="intent-capturable"`, "requires_capture")
		key := keyOf(t, form, "capture-form")
		if pg := admin.Post(path+"/capture", url.Values{"amount_to_capture_minor": {"1001"}, "idempotency_key": {key}}); pg.Status != 400 {
			t.Fatalf("capture of too much: %d", pg.Status)
		} else {
			pg.Contains(t, "amount_exceeds_capturable")
		}
		key = keyOf(t, admin.Get(path), "capture-form")
		for i := 0; i < 2; i++ {
			if pg := admin.Post(path+"/capture", url.Values{"amount_to_capture_minor": {"600"}, "idempotency_key": {key}}); pg.Status != 303 {
				t.Fatalf("capture, submission %d: %d %.500s", i+1, pg.Status, pg.Body)
			}
		}
		got := e.Get("/v1/payment_intents/" + pi).Map(t)
		if got["status"] != "succeeded" || got["amount_captured_minor"] != float64(600) {
			t.Fatalf("after the capture: %v", got)
		}
		after := admin.Get(path + "?done=payment_captured")
		after.Contains(t, "The payment was captured")
		if strings.Contains(after.Body, `id="capture-form"`) || strings.Contains(after.Body, `id="cancel-form"`) {
			t.Fatal("a succeeded intent still offers capture or cancel")
		}

		r = e.Post("/v1/payment_intents", map[string]any{"amount_minor": 50, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		waiting, _ := r.Map(t)["id"].(string)
		wpath := "/portal/test/payment_intents/" + waiting
		wpage := admin.Get(wpath)
		if strings.Contains(wpage.Body, `id="capture-form"`) {
			t.Fatal("a requires_action intent offers capture")
		}
		if pg := admin.Post(wpath+"/cancel", url.Values{"cancellation_reason": {"duplicate"}, "idempotency_key": {keyOf(t, wpage, "cancel-form")}}); pg.Status != 303 {
			t.Fatalf("cancel: %d %.500s", pg.Status, pg.Body)
		}
		if got := e.Get("/v1/payment_intents/" + waiting).Map(t); got["status"] != "canceled" || got["cancellation_reason"] != "duplicate" {
			t.Fatalf("after the cancel: %v", got)
		}
		admin.Get(wpath).Contains(t, `id="intent-cancellation-reason"`, "duplicate")
		if err := ledger.Verify(t.Context(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}
