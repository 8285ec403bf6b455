package portal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// TestMenuHidesWhatTheMerchantCannotUse: a merchant that is not a
// participant bank has no "Bank transfers" entry (the page still answers,
// saying why); a participant bank has it. Role-limited entries stay hidden
// from viewers.
func TestMenuHidesWhatTheMerchantCannotUse(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		plain := e.NewPortal()
		plain.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		page := plain.Get("/portal/test/")
		if strings.Contains(page.Body, `href="/portal/test/transfers"`) {
			t.Error("a merchant that is not a participant bank is offered Bank transfers")
		}
		if !strings.Contains(page.Body, `href="/portal/test/payouts"`) {
			t.Error("the menu lost Payouts")
		}
		if direct := plain.Get("/portal/test/transfers"); direct.Status != 200 || !strings.Contains(direct.Body, "participant") {
			t.Errorf("the transfers page itself: %d", direct.Status)
		}

		bank := e.NewMerchant(merchants.CreateParams{Name: "Bank", BIC: "BANKDJD1XXX"})
		bp := e.NewPortal()
		bp.Login(bank.Portal.Email, bank.Portal.Password)
		if !strings.Contains(bp.Get("/portal/test/").Body, `href="/portal/test/transfers"`) {
			t.Error("a participant bank is not offered Bank transfers")
		}

		if _, err := e.Main.Merchants.CreateUser(context.Background(), e.Merchant.MerchantID, "viewer@example.com", "password-viewer-1", "viewer"); err != nil {
			t.Fatal(err)
		}
		v := e.NewPortal()
		v.Login("viewer@example.com", "password-viewer-1")
		body := v.Get("/portal/test/").Body
		for _, admin := range []string{`href="/portal/test/users"`, `href="/portal/test/audit"`} {
			if strings.Contains(body, admin) {
				t.Errorf("a viewer is offered %s", admin)
			}
		}
	})
}
