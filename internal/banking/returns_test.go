package banking_test

import (
	"slices"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// returns: partial returns and cancellations summing to the original
// succeed, one more franc is refused (409), the money goes back, and the
// ledger still balances.
func (w *world) returns(t *testing.T) {
	e := w.e
	debtorBefore, creditorBefore := available(t, e, w.bank), available(t, e, w.bcim)
	msg := message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.bcim.BIC, Amount: 1000},
		tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.bcim.BIC, Amount: 300})
	if rep := submitJSON(t, e, w.bank.SK, msg, 200); rep.GroupStatus != "ACSC" {
		t.Fatalf("setup: %+v", rep)
	}
	uetr, second := uetrOf(msg, 0), uetrOf(msg, 1)
	path := "/banking/v1/transfers/" + uetr

	do := func(key, action string, body any) *apptest.Response {
		if b, ok := body.([]byte); ok {
			return postXML(e, key, path+"/"+action, b)
		}
		return postJSON(e, key, path+"/"+action, body)
	}
	reason := func(amount int64) map[string]any {
		m := map[string]any{"reason_code": "AC04", "reason_text": "Closed account"}
		if amount > 0 {
			m["amount_minor"] = amount
		}
		return m
	}
	// Wrong agent: 403.
	if r := do(w.bank.SK, "return", reason(100)); r.Status != 403 || r.ErrorCode() != "permission_denied" {
		t.Fatalf("return by the debtor agent: %d %s", r.Status, r.Body)
	}
	if r := do(w.bcim.SK, "cancel", reason(100)); r.Status != 403 || r.ErrorCode() != "permission_denied" {
		t.Fatalf("cancel by the creditor agent: %d %s", r.Status, r.Body)
	}
	if r := do(w.third.SK, "return", reason(100)); r.Status != 404 {
		t.Fatalf("return by a third bank: %d %s", r.Status, r.Body)
	}
	// Bad bodies: 400 naming the field.
	if r := do(w.bcim.SK, "return", map[string]any{"reason_code": "AC04", "reason_text": "x", "amount_minor": 1.5}); r.Status != 400 || r.ErrorCode() == "" {
		t.Fatalf("fractional amount: %d %s", r.Status, r.Body)
	}
	if r := do(w.bcim.SK, "return", camt056Cancel("CXL-WRONG", w.bank.BIC, uetr)); r.Status != 400 || r.ErrorCode() != "message_type_mismatch" {
		t.Fatalf("camt.056 to /return: %d %s", r.Status, r.Body)
	}
	if r := do(w.bcim.SK, "return", pacs004Return("RTR-OTHER", second, "10")); r.Status != 400 {
		t.Fatalf("pacs.004 naming another transfer: %d %s", r.Status, r.Body)
	}

	// 300 returned (JSON), 450 cancelled (JSON), 250 returned (pacs.004):
	// the original 1000.
	steps := []struct {
		key, action string
		body        any
		returned    int64
	}{
		{w.bcim.SK, "return", reason(300), 300},
		{w.bank.SK, "cancel", reason(450), 750},
		{w.bcim.SK, "return", pacs004Return("RTR-0001", uetr, "250"), 1000},
		// The same pacs.004 again is not applied twice.
		{w.bcim.SK, "return", pacs004Return("RTR-0001", uetr, "250"), 1000},
	}
	var row transferRow
	for i, s := range steps {
		r := do(s.key, s.action, s.body)
		if r.Status != 200 {
			t.Fatalf("step %d: %d %s", i, r.Status, r.Body)
		}
		r.JSON(t, &row)
		if row.ReturnedAmountMinor != s.returned || row.Status != "ACSC" {
			t.Fatalf("step %d: returned %d, want %d (%s)", i, row.ReturnedAmountMinor, s.returned, row.Status)
		}
	}
	if len(row.Returns) != 3 || row.Returns[0].Type != "return" || row.Returns[1].Type != "cancel" || row.Returns[2].AmountMinor != 250 {
		t.Fatalf("returns: %+v", row.Returns)
	}
	// One more franc: 409, nothing moves.
	for _, r := range []*apptest.Response{do(w.bcim.SK, "return", reason(1)), do(w.bank.SK, "cancel", reason(0))} {
		if r.Status != 409 || r.ErrorCode() != "amount_exceeds_remaining" {
			t.Fatalf("over-return: %d %s", r.Status, r.Body)
		}
	}
	// The second transfer is cancelled whole with a camt.056.
	r := postXML(e, w.bank.SK, "/banking/v1/transfers/"+second+"/cancel", camt056Cancel("CXL-0001", w.bank.BIC, second))
	r.JSON(t, &row)
	if r.Status != 200 || row.ReturnedAmountMinor != 300 {
		t.Fatalf("camt.056: %d %s", r.Status, r.Body)
	}

	if d := available(t, e, w.bank); d != debtorBefore {
		t.Fatalf("debtor %d, want %d: every franc came back", d, debtorBefore)
	}
	if c := available(t, e, w.bcim); c != creditorBefore {
		t.Fatalf("creditor %d, want %d", c, creditorBefore)
	}
	if evs := eventsFor(t, e, w.bank.MerchantID, uetr); !slices.Equal(evs, []string{"transfer.settled", "transfer.returned", "transfer.returned", "transfer.returned"}) {
		t.Fatalf("events: %v", evs)
	}
	// A rejected transfer cannot be returned.
	rej := message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.bcim.BIC, Amount: 0})
	submitJSON(t, e, w.bank.SK, rej, 200)
	if r := postJSON(e, w.bank.SK, "/banking/v1/transfers/"+uetrOf(rej, 0)+"/cancel", reason(0)); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("cancel of a rejected transfer: %d %s", r.Status, r.Body)
	}
	verifyLedger(t, e)
}

// returnsPacs004v10: a pacs.004.001.10 (Fedwire's and FedNow's version),
// bare and in FedNow's envelope, returns money like a .09; the same message
// again is not applied twice; sent to /cancel it is refused.
func (w *world) returnsPacs004v10(t *testing.T) {
	e := w.e
	debtorBefore, creditorBefore := available(t, e, w.bank), available(t, e, w.bcim)
	msg := message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.bcim.BIC, Amount: 500})
	if rep := submitJSON(t, e, w.bank.SK, msg, 200); rep.GroupStatus != "ACSC" {
		t.Fatalf("setup: %+v", rep)
	}
	uetr := uetrOf(msg, 0)
	path := "/banking/v1/transfers/" + uetr
	if r := postXML(e, w.bank.SK, path+"/cancel", pacs004v10Return("RTR10-CXL", uetr, "10", false)); r.Status != 400 || r.ErrorCode() != "message_type_mismatch" {
		t.Fatalf("pacs.004.001.10 to /cancel: %d %s", r.Status, r.Body)
	}
	steps := []struct {
		body     []byte
		returned int64
	}{
		{pacs004v10Return("RTR10-0001", uetr, "200", false), 200},
		{pacs004v10Return("RTR10-0002", uetr, "300", true), 500},
		{pacs004v10Return("RTR10-0002", uetr, "300", true), 500}, // the same message again
	}
	var row transferRow
	for i, s := range steps {
		r := postXML(e, w.bcim.SK, path+"/return", s.body)
		if r.Status != 200 {
			t.Fatalf("step %d: %d %s", i, r.Status, r.Body)
		}
		r.JSON(t, &row)
		if row.ReturnedAmountMinor != s.returned {
			t.Fatalf("step %d: returned %d, want %d", i, row.ReturnedAmountMinor, s.returned)
		}
	}
	if len(row.Returns) != 2 || row.Returns[0].ReasonCode != "AC04" || row.Returns[1].AmountMinor != 300 {
		t.Fatalf("returns: %+v", row.Returns)
	}
	if d, c := available(t, e, w.bank), available(t, e, w.bcim); d != debtorBefore || c != creditorBefore {
		t.Fatalf("balances debtor %d creditor %d, want %d and %d", d, c, debtorBefore, creditorBefore)
	}
}
