package sandbox_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestHostedPagesNameTheMerchantAndRail: the customer sees whom they pay
// (the merchant's name, on the form and on the page that ends it) and the
// rail's customer-facing name ("Wallet A"), never its code ("wallet_a").
func TestHostedPagesNameTheMerchantAndRail(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		get := func(u string) string {
			t.Helper()
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d", u, resp.StatusCode)
			}
			return string(b)
		}
		open := func(body map[string]any, wantTitle string) string {
			t.Helper()
			body["return_url"] = "https://shop.example/return"
			r := e.Post("/v1/payment_intents", body)
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			na, _ := r.Map(t)["next_action"].(map[string]any)
			u, _ := na["redirect_url"].(string)
			if u == "" {
				t.Fatalf("no hosted page: %s", r.Body)
			}
			page := get(u)
			for _, want := range []string{`<p class="merchant" id="merchant">Test merchant</p>`, "<h1>" + wantTitle + "</h1>", "Test merchant · payd sandbox</title>"} {
				if !strings.Contains(page, want) {
					t.Errorf("the %s page lacks %q", wantTitle, want)
				}
			}
			for _, code := range []string{"wallet_a", "wallet_d"} {
				if strings.Contains(page, ">"+code) || strings.Contains(page, "with "+code) {
					t.Errorf("the %s page shows the code %s", wantTitle, code)
				}
			}
			return u
		}
		open(map[string]any{"amount": 1500, "currency": "DJF", "provider": "wallet_a", "metadata": map[string]string{"wallet_a_mode": "hpp"}}, "Pay with Wallet A")
		open(map[string]any{"amount": 100, "currency": "ETB", "provider": "wallet_d"}, "Pay with Wallet D")
		open(map[string]any{"amount": 25, "currency": "USD", "provider": "wallet_a", "metadata": map[string]string{"wallet_a_mode": "card"}}, "Pay by card")
	})
}
