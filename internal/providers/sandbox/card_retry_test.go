package sandbox_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers/sandbox"
)

// TestDeclinedCardMayTryAnother: on the hosted card page a declined card
// leaves the intent waiting, with the decline as last_error and the page
// saying how many cards are left; another card then pays it. The last
// allowed decline cancels the intent and sends the customer back.
func TestDeclinedCardMayTryAnother(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		open := func() (id, page string) {
			t.Helper()
			r := e.Post("/v1/payment_intents", map[string]any{"amount": 25, "currency": "USD", "provider": "wallet_a",
				"metadata": map[string]string{"wallet_a_mode": "card"}, "return_url": "https://shop.example/return"})
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			m := r.Map(t)
			na, _ := m["next_action"].(map[string]any)
			return m["id"].(string), na["redirect_url"].(string)
		}
		pay := func(page, card string) (status int, location string) {
			t.Helper()
			u, _ := url.Parse(page)
			form := url.Values{"t": {u.Query().Get("t")}, "card_number": {card}, "exp_month": {"12"}, "exp_year": {"2034"}, "cvc": {"123"}}
			resp, err := client.PostForm(page, form)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Location")
		}
		show := func(page string) string {
			t.Helper()
			resp, err := http.Get(page)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		intent := func(id string) map[string]any { return e.Get("/v1/payment_intents/" + id).Map(t) }

		id, page := open()
		if st, loc := pay(page, sandbox.CardDeclined); st != 303 || strings.HasPrefix(loc, "https://shop.example") {
			t.Fatalf("first decline: %d to %s, want back to the card page", st, loc)
		}
		in := intent(id)
		le, _ := in["last_error"].(map[string]any)
		if in["status"] != "requires_action" || le["code"] != "card_declined" {
			t.Fatalf("after one decline: %v, last_error %v", in["status"], in["last_error"])
		}
		if body := show(page); !strings.Contains(body, "Try another card (2 attempts left).") || !strings.Contains(body, `id="card_number"`) {
			t.Fatalf("the card page after a decline does not offer another card:\n%.600s", body)
		}
		if st, loc := pay(page, sandbox.CardSuccess); st != 303 || !strings.HasPrefix(loc, "https://shop.example/return") {
			t.Fatalf("second card: %d to %s", st, loc)
		}
		if in := intent(id); in["status"] != "succeeded" || in["last_error"] != nil {
			t.Fatalf("after another card: %v, last_error %v", in["status"], in["last_error"])
		}

		// Declined every time: the MaxCardAttempts-th decline cancels.
		id, page = open()
		for i := 1; i <= payments.MaxCardAttempts; i++ {
			st, loc := pay(page, sandbox.CardDeclined)
			last := i == payments.MaxCardAttempts
			if st != 303 || strings.HasPrefix(loc, "https://shop.example") != last {
				t.Fatalf("decline %d: %d to %s", i, st, loc)
			}
		}
		in = intent(id)
		le, _ = in["last_error"].(map[string]any)
		if in["status"] != "canceled" || le["code"] != "card_declined" {
			t.Fatalf("after %d declines: %v, last_error %v", payments.MaxCardAttempts, in["status"], in["last_error"])
		}
		// One payment_intent.canceled, no event for the declines it survived.
		ev := e.Get("/v1/events?related_object_id=" + id).Map(t)
		var types []string
		for _, x := range ev["data"].([]any) {
			types = append(types, x.(map[string]any)["type"].(string))
		}
		if strings.Join(types, ",") != "payment_intent.canceled,payment_intent.created" {
			t.Fatalf("events %v", types)
		}
	})
}
