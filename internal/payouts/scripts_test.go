package payouts_test

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// TestPayoutToListedNameInOtherScripts: a payout to a listed name written
// in Hangul, in kanji or in Hebrew is held, the hit naming the entry and its
// list (UN or EU); an everyday name beside them is not.
func TestPayoutToListedNameInOtherScripts(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, env *apptest.Env) {
		e := asNewMerchant(t, env)
		topup(t, e, "DJF", 1_000_000)
		cases := []struct {
			name, list string
			entry      int
		}{
			{"박영식", "un_sc", 9100001},          // PAK YONG SIK
			{"高山清司", "eu_fsf", 910002},         // TAKAYAMA, Kiyoshi
			{"ניקולס מדורו", "eu_fsf", 910001}, // MADURO MOROS, Nicolas
			{"Игорь Сечин", "un_sc", 9100002},  // IGOR IVANOVICH SECHIN
		}
		for _, c := range cases {
			r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
				"recipient_msisdn": "+25377123456", "recipient_name": c.name})
			if r.Status != 201 {
				t.Fatalf("%s: create: %d %s", c.name, r.Status, r.Body)
			}
			var p payout
			r.JSON(t, &p)
			if p.Status != "held" || p.Screening.Status != "hit" || len(p.Screening.Matches) == 0 ||
				p.Screening.Matches[0].List != c.list || p.Screening.Matches[0].EntryID != c.entry {
				t.Errorf("%q: payout %s, screening %+v; want held on %s entry %d", c.name, p.Status, p.Screening, c.list, c.entry)
			}
		}
		r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377123456", "recipient_name": "Fatouma Ahmed Houssein"})
		var p payout
		r.JSON(t, &p)
		if r.Status != 201 || p.Status == "held" || p.Screening.Status != "clear" {
			t.Errorf("an everyday name: %d %s", r.Status, r.Body)
		}
		if err := ledger.Verify(context.Background(), env.Main.DB); err != nil {
			t.Fatalf("ledger: %v", err)
		}
	}, apptest.WithAllSanctionsLists(t))
}
