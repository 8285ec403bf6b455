package portal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserLoginAndRollKey: in a real browser, a wrong password shows the
// message next to the field, the keyboard signs in, the test/live switch
// works, and rolling a key shows the new secret once; the API then takes the
// new key and refuses the old one.
func TestBrowserLoginAndRollKey(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		old, err := e.Main.Merchants.Authenticate(context.Background(), e.SK2)
		if err != nil {
			t.Fatal(err)
		}
		b.open(e.URL + "/portal/login")
		b.do(chromedp.SendKeys(chromedp.ID("f-email"), e.Merchant.Portal.Email),
			chromedp.SendKeys(chromedp.ID("f-password"), "not-the-password"))
		b.click(`button[type=submit]`)
		if msg := b.text("#f-password-error"); !strings.Contains(msg, "Wrong email or password") {
			t.Errorf("wrong password message: %q", msg)
		}
		b.shot("wrong-password")

		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		b.shot("signed-in")
		b.click("#mode-switch")
		if badge := b.text("#mode-badge"); badge != "Live mode" {
			t.Errorf("mode badge after the switch: %q", badge)
		}
		b.shot("live-mode")

		b.open(e.URL + "/portal/test/api_keys")
		b.click(`#key-` + old.ID + ` button[aria-label^="Roll"]`)
		secret, notice := b.text("#new-secret"), b.text("#new-key")
		b.shot("key-rolled")
		if !strings.HasPrefix(secret, "sk_test_") || !strings.Contains(notice, old.ID) {
			t.Fatalf("rolled key: secret %.12q notice %q", secret, notice)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: secret}); r.Status != 200 {
			t.Fatalf("new key: %d", r.Status)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: e.SK2}); r.Status != 401 {
			t.Fatalf("rolled-out key still works: %d", r.Status)
		}
		e.RequireSecretsAbsent(secret)
	})
}
