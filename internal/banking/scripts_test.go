package banking_test

import (
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestCreditorInOtherScriptsWaitsForReview: a transfer whose creditor is a
// listed name written in Hangul, in kanji or in Hebrew (UN and EU entries)
// is ACWP, held for review with its amount reserved; an everyday creditor in
// the same message settles.
func TestCreditorInOtherScriptsWaitsForReview(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		debtor := newBank(t, e, "Script debtor bank", "SCRDDJJDXXX", false)
		creditor := newBank(t, e, "Script creditor bank", "SCRCDJJDXXX", false)
		fund(t, e, debtor, 100_000)
		before := available(t, e, debtor)
		for _, name := range []string{"박영식", "高山清司", "ניקולס מדורו"} {
			body := xmlMessage(newMsgID(),
				xmlTx{Amount: "700", Creditor: name, DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC},
				xmlTx{Amount: "10", Creditor: "Fatouma Ahmed Houssein", DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC})
			r := postXML(e, debtor.SK, "/banking/v1/transfers", body)
			group, got := readReport(t, "xml", r.Body)
			if r.Status != 202 || group != "PART" || got[0].status != "ACWP" || got[1].status != "ACSC" {
				t.Errorf("creditor %q: %d %s", name, r.Status, r.Body)
			}
		}
		if d := available(t, e, debtor); d != before-3*710 {
			t.Errorf("debtor %d, want %d: held amounts stay reserved", d, before-3*710)
		}
		verifyLedger(t, e)
	}, apptest.WithAllSanctionsLists(t))
}
