package app_test

import (
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// TestAccount: GET /v1/account names the key's own merchant and mode and the
// key, never another merchant's; a publishable key may not read it.
func TestAccount(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		type account struct {
			Object, ID, Name, KeyID string
			Livemode                bool
		}
		get := func(key string) (int, account) {
			t.Helper()
			r := e.Do(apptest.Request{Method: "GET", Path: "/v1/account", Key: key})
			var a struct {
				Object   string `json:"object"`
				ID       string `json:"id"`
				Name     string `json:"name"`
				KeyID    string `json:"key_id"`
				Livemode bool   `json:"livemode"`
			}
			if r.Status == 200 {
				r.JSON(t, &a)
			}
			return r.Status, account{Object: a.Object, ID: a.ID, Name: a.Name, KeyID: a.KeyID, Livemode: a.Livemode}
		}
		code, a := get(e.SK)
		if code != 200 || a.Object != "account" || a.ID != e.Merchant.MerchantID || a.Livemode || !strings.HasPrefix(a.KeyID, "key_") || a.Name == "" {
			t.Fatalf("test key: %d %+v (merchant %s)", code, a, e.Merchant.MerchantID)
		}
		_, a2 := get(e.SK2)
		if a2.ID != a.ID || a2.KeyID == a.KeyID {
			t.Fatalf("the second key: %+v, first %+v", a2, a)
		}
		other := e.NewMerchant(merchants.CreateParams{Name: "Other Shop"})
		if code, o := get(other.SecretKeys[0]); code != 200 || o.ID != other.MerchantID || o.Name != "Other Shop" {
			t.Fatalf("another merchant's key: %d %+v", code, o)
		}
		if code, _ := get(e.PK); code != 403 && code != 401 {
			t.Fatalf("a publishable key read the account: %d", code)
		}
	})
}
