package portal_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

// TestGoLiveChecklist: the live checklist reads each step from the state
// the API checks, so a step turns done when (and only when) that state
// changes; it is in the live menu only.
func TestGoLiveChecklist(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		mid := e.Merchant.MerchantID
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		step := func(body, id string) string {
			t.Helper()
			m := regexp.MustCompile(`(?s)<tr id="golive-` + id + `">.*?class="status (\w+)">`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no step %s on the page", id)
			}
			return map[string]string{"ok": "done", "failed": "to do"}[m[1]]
		}
		pg := admin.Get("/portal/live/go-live")
		pg.Contains(t, "Live money is refused until")
		body := string(pg.Body)
		for _, id := range []string{"kyc", "provider", "four_eyes", "two_factor"} {
			if got := step(body, id); got != "to do" {
				t.Fatalf("a new merchant's %s step is %q", id, got)
			}
		}
		if err := e.Main.Merchants.SetKYC(ctx, mid, "approved"); err != nil {
			t.Fatal(err)
		}
		th := int64(500000)
		if _, err := e.Main.Merchants.UpdateThreshold(ctx, store.NoClaim, mid, true, &th, "usr_test", true); err != nil {
			t.Fatal(err)
		}
		body = string(admin.Get("/portal/live/go-live").Body)
		for _, id := range []string{"kyc", "four_eyes"} {
			if got := step(body, id); got != "done" {
				t.Fatalf("%s is %q once its state is set", id, got)
			}
		}
		if step(body, "provider") != "to do" || step(body, "keys") != "to do" {
			t.Fatal("the provider or key step is done with no live provider connected nor live key")
		}
		if err := e.Main.Merchants.ConnectProvider(ctx, mid, "bank_a", merchants.ProviderConfig{BaseURL: "https://bank-a.example", APIKey: "k", CallbackSecret: "s"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Main.Merchants.CreateKey(ctx, mid, true, "secret"); err != nil {
			t.Fatal(err)
		}
		body = string(admin.Get("/portal/live/go-live").Body)
		for _, id := range []string{"provider", "keys"} {
			if got := step(body, id); got != "done" {
				t.Fatalf("%s is %q once its state is set", id, got)
			}
		}
		// Test mode's threshold does not count for live.
		if got := regexp.MustCompile(`id="golive-summary">(\d+) of (\d+) done`).FindStringSubmatch(body); got == nil {
			t.Fatalf("no summary: %.300s", body)
		}
		// The menu offers it in live mode only.
		admin.Get("/portal/live/").Contains(t, `href="/portal/live/go-live"`)
		if test := string(admin.Get("/portal/test/").Body); regexp.MustCompile(`href="/portal/test/go-live"`).MatchString(test) {
			t.Fatal("the test-mode menu links the go-live checklist")
		}
	})
}
