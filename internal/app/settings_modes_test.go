package app_test

import (
	"context"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
)

// TestSettingsPerModeFourEyes (issue 15, finding 2): a test key's settings
// never touch live mode's threshold; loosening the live threshold from a key
// is a pending change (202) that the requester cannot approve and another
// principal approves once (racing approvals: one wins), leaving audit rows
// and events; tightening applies at once.
func TestSettingsPerModeFourEyes(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		if err := e.Main.Merchants.SetKYC(ctx, e.Merchant.MerchantID, "approved"); err != nil {
			t.Fatal(err)
		}
		if err := e.Main.Merchants.ConnectProvider(ctx, e.Merchant.MerchantID, "wallet_a", merchants.ProviderConfig{BaseURL: "http://127.0.0.1:9/never",
			APIKey: "prov_key_unused", CallbackSecret: "prov_cbsec_unused"}); err != nil {
			t.Fatal(err)
		}
		live := func() string {
			k, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, true, auth.KindSecret)
			if err != nil {
				t.Fatal(err)
			}
			return k.Secret
		}
		l1, l2 := live(), live()
		post := func(key, path string, body any) *apptest.Response {
			return e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body})
		}
		threshold := func(key string) any {
			var s map[string]any
			e.Do(apptest.Request{Method: "GET", Path: "/v1/settings", Key: key}).JSON(t, &s)
			return s["approval_threshold_minor"]
		}
		if r := post(l1, "/v1/settings", map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("tighten live: %d %s", r.Status, r.Body)
		}
		// The attack of the finding: a test key clears "the" threshold.
		if r := post(e.SK, "/v1/settings", map[string]any{"approval_threshold_minor": nil}); r.Status != 200 {
			t.Fatalf("test key clears test mode's: %d %s", r.Status, r.Body)
		}
		if got := threshold(l1); got != float64(5000) {
			t.Fatalf("a test key changed live's threshold: %v", got)
		}
		// Loosening live from a key waits for another person.
		var c struct {
			ID, Status, Object string
		}
		r := post(l1, "/v1/settings", map[string]any{"approval_threshold_minor": nil})
		r.JSON(t, &c)
		if r.Status != 202 || c.Status != "pending" || c.Object != "settings_change" {
			t.Fatalf("loosen live: %d %s", r.Status, r.Body)
		}
		if got := threshold(l1); got != float64(5000) {
			t.Fatalf("a pending change applied: %v", got)
		}
		if r := post(l1, "/v1/settings/changes/"+c.ID+"/approve", nil); r.Status != 403 || r.ErrorCode() != "self_approval_not_allowed" {
			t.Fatalf("self-approval: %d %s", r.Status, r.Body)
		}
		if r := post(e.SK2, "/v1/settings/changes/"+c.ID+"/approve", nil); r.Status != 404 {
			t.Fatalf("a test key approved a live change: %d %s", r.Status, r.Body)
		}
		// Two other principals race to approve: exactly one applies it.
		l3 := live()
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, k := range []string{l2, l3} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = post(k, "/v1/settings/changes/"+c.ID+"/approve", nil).Status
			}()
		}
		wg.Wait()
		if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
			t.Fatalf("racing approvals: %v", statuses)
		}
		if got := threshold(l1); got != nil {
			t.Fatalf("approved change not applied: %v", got)
		}
		var audits, evs int
		if err := e.Main.DB.QueryRow(ctx, "SELECT COUNT(*) FROM portal_audit WHERE merchant_id = ? AND livemode = ? AND action IN ('settings.change_requested', 'settings.loosened')",
			e.Merchant.MerchantID, true).Scan(&audits); err != nil || audits != 2 {
			t.Fatalf("audit rows: %d %v", audits, err)
		}
		if err := e.Main.DB.QueryRow(ctx, "SELECT COUNT(*) FROM events WHERE merchant_id = ? AND livemode = ? AND type IN ('settings.change_requested', 'settings.updated')",
			e.Merchant.MerchantID, true).Scan(&evs); err != nil || evs != 3 {
			t.Fatalf("events (requested, tightened, loosened): %d %v", evs, err)
		}
		// Raising is loosening too; lowering is not.
		if r := post(l1, "/v1/settings", map[string]any{"approval_threshold_minor": 100}); r.Status != 200 {
			t.Fatalf("set: %d", r.Status)
		}
		if r := post(l1, "/v1/settings", map[string]any{"approval_threshold_minor": 200}); r.Status != 202 {
			t.Fatalf("raise: %d", r.Status)
		}
		if r := post(l1, "/v1/settings", map[string]any{"approval_threshold_minor": 50}); r.Status != 200 {
			t.Fatalf("lower: %d", r.Status)
		}
	})
}
