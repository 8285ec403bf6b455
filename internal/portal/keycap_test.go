package portal_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// TestPortalKeyCap: an admin creating keys on the keys page gets 201 until
// the merchant holds merchants.MaxActiveKeys active test keys, then 409
// too_many_api_keys naming the number, and no key is made.
func TestPortalKeyCap(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/api_keys")
		made := 0
		for i := 0; i < merchants.MaxActiveKeys+1; i++ {
			pg := p.Post("/portal/test/api_keys", url.Values{"kind": {"secret"}})
			if pg.Status == http.StatusCreated {
				made++
				continue
			}
			if pg.Status != http.StatusConflict {
				t.Fatalf("key %d: %d", i, pg.Status)
			}
			pg.Contains(t, "too_many_api_keys", "at most 20 active test-mode API keys")
			break
		}
		before := countKeys(t, e)
		if pg := p.Post("/portal/test/api_keys", url.Values{"kind": {"publishable"}}); pg.Status != http.StatusConflict {
			t.Fatalf("a key past the cap: %d, want 409", pg.Status)
		}
		if n := countKeys(t, e); n != before {
			t.Fatalf("a refused creation made a key: %d keys, then %d", before, n)
		}
		if made == 0 || made >= merchants.MaxActiveKeys+1 {
			t.Fatalf("made %d keys before the refusal", made)
		}
	})
}
