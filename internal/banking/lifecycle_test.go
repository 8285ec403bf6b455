package banking_test

import (
	"slices"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// waitStatus polls a transfer until it has the status (the background
// settlement), failing after a generous deadline.
func waitStatus(t *testing.T, e *apptest.Env, key, uetr, status string) transferRow {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := getTransfer(t, e, key, uetr)
		if row.Status == status {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer %s still %s, want %s", uetr, row.Status, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getXML(t *testing.T, w *world, key, uetr, name string) []outcome {
	t.Helper()
	r := w.e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetr, Key: key, Headers: map[string]string{"Accept": "application/xml"}})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/xml" {
		t.Fatalf("GET report: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	w.docs.add(name, r.Body)
	_, txs := readReport(t, "xml", r.Body)
	return txs
}

// deferredSettlement: a transfer to a --deferred-settlement participant is
// ACSP at first, the amount leaves the debtor at once, and the background
// job settles it (ACSC, transfer.settled to both agents).
func (w *world) deferredSettlement(t *testing.T) {
	e := w.e
	debtorBefore, creditorBefore := available(t, e, w.bank), available(t, e, w.deferred)
	body := xmlMessage(newMsgID(), xmlTx{Amount: "2500", DebtorAgent: w.bank.BIC, CreditorAgent: w.deferred.BIC},
		xmlTx{Amount: "100", DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC})
	r := postXML(e, w.bank.SK, "/banking/v1/transfers", body)
	w.docs.add("acsp part", r.Body)
	group, got := readReport(t, "xml", r.Body)
	if r.Status != 200 || group != "PART" || got[0].status != "ACSP" || got[1].status != "ACSC" {
		t.Fatalf("deferred: %d %s", r.Status, r.Body)
	}
	uetr := got[0].uetr
	if txs := getXML(t, w, w.bank.SK, uetr, "acsp get"); txs[0].status != "ACSP" {
		t.Fatalf("report while in flight: %+v", txs)
	}
	if d := available(t, e, w.bank); d != debtorBefore-2600 {
		t.Fatalf("debtor %d, want %d", d, debtorBefore-2600)
	}
	row := waitStatus(t, e, w.deferred.SK, uetr, "ACSC")
	if row.SettledAt == nil {
		t.Fatalf("settled without settled_at: %+v", row)
	}
	if c := available(t, e, w.deferred); c != creditorBefore+2500 {
		t.Fatalf("creditor %d, want %d", c, creditorBefore+2500)
	}
	for _, m := range []string{w.bank.MerchantID, w.deferred.MerchantID} {
		if evs := eventsFor(t, e, m, uetr); !slices.Equal(evs, []string{"transfer.settled"}) {
			t.Fatalf("events for %s: %v", m, evs)
		}
	}
	// The job ran once; running it again would find nothing to do.
	if n, err := e.Main.Jobs.RunOnce(t.Context()); err != nil || n != 0 {
		t.Fatalf("jobs left: %d %v", n, err)
	}
	verifyLedger(t, e)
}

// screeningHold: a sanctions hit is ACWP (HTTP 202) with the amount held; the
// creditor agent releases (ACSC) or rejects (RJCT RR04, amount back).
func (w *world) screeningHold(t *testing.T) {
	e := w.e
	debtorBefore, creditorBefore := available(t, e, w.bank), available(t, e, w.cace)
	body := xmlMessage(newMsgID(), xmlTx{Amount: "4000", Creditor: "Daniel Moreno", DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC})
	r := postXML(e, w.bank.SK, "/banking/v1/transfers", body)
	w.docs.add("acwp", r.Body)
	group, got := readReport(t, "xml", r.Body)
	if r.Status != 202 || group != "ACWP" || got[0].status != "ACWP" {
		t.Fatalf("screening hit: %d %s", r.Status, r.Body)
	}
	held := got[0].uetr
	if d := available(t, e, w.bank); d != debtorBefore-4000 {
		t.Fatalf("held amount not reserved: debtor %d, want %d", d, debtorBefore-4000)
	}
	getXML(t, w, w.cace.SK, held, "acwp get")

	// A second hit, in JSON, to reject; and a clear name beside it (PART
	// with a 202).
	msg := message(newMsgID(), tx{Debtor: "Elvis Angus Logan Morey", DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 600},
		tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 50})
	rep := submitJSON(t, e, w.bank.SK, msg, 202)
	if rep.GroupStatus != "PART" || rep.Transactions[0].Status != "ACWP" || rep.Transactions[1].Status != "ACSC" {
		t.Fatalf("debtor name hit: %+v", rep)
	}
	rejected := uetrOf(msg, 0)

	review := func(key, uetr string, body any) *apptest.Response {
		return postJSON(e, key, "/banking/v1/transfers/"+uetr+"/review", body)
	}
	for name, c := range map[string]struct {
		key    string
		body   any
		status int
		code   string
	}{
		"debtor agent":   {w.bank.SK, map[string]any{"decision": "release"}, 403, "permission_denied"},
		"third bank":     {w.third.SK, map[string]any{"decision": "release"}, 404, "resource_missing"},
		"not a bank":     {e.SK, map[string]any{"decision": "release"}, 403, "permission_denied"},
		"bad decision":   {w.cace.SK, map[string]any{"decision": "maybe"}, 400, "parameter_invalid"},
		"unknown member": {w.cace.SK, map[string]any{"decision": "release", "why": "x"}, 400, "parameter_unknown"},
	} {
		if r := review(c.key, held, c.body); r.Status != c.status || r.ErrorCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
		}
	}

	r = review(w.cace.SK, held, map[string]any{"decision": "release", "note": "false positive: different person"})
	if r.Status != 200 {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	var row transferRow
	r.JSON(t, &row)
	if row.Status != "ACSC" || row.SettledAt == nil || row.StatusReason != nil {
		t.Fatalf("released: %+v", row)
	}
	if r := review(w.cace.SK2, held, map[string]any{"decision": "reject"}); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("second review: %d %s", r.Status, r.Body)
	}

	r = review(w.cace.SK2, rejected, map[string]any{"decision": "reject", "note": "confirmed match"})
	r.JSON(t, &row)
	if r.Status != 200 || row.Status != "RJCT" || row.StatusReason == nil || row.StatusReason.Code != "RR04" || row.SettledAt != nil {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	if txs := getXML(t, w, w.bank.SK, rejected, "rjct rr04 get"); txs[0].status != "RJCT" || txs[0].reason != "RR04" {
		t.Fatalf("report after reject: %+v", txs)
	}
	// Released: the creditor got 4000 (+50 of the clear one); rejected: the
	// debtor got its 600 back.
	if d := available(t, e, w.bank); d != debtorBefore-4050 {
		t.Fatalf("debtor %d, want %d", d, debtorBefore-4050)
	}
	if c := available(t, e, w.cace); c != creditorBefore+4050 {
		t.Fatalf("creditor %d, want %d", c, creditorBefore+4050)
	}
	if evs := eventsFor(t, e, w.cace.MerchantID, held); !slices.Equal(evs, []string{"transfer.settled"}) {
		t.Fatalf("events after release: %v", evs)
	}
	if evs := eventsFor(t, e, w.bank.MerchantID, rejected); !slices.Equal(evs, []string{"transfer.rejected"}) {
		t.Fatalf("events after reject: %v", evs)
	}
	// A compliance queue: the creditor agent's held transfers.
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers?status=ACWP&role=creditor", Key: w.cace.SK}); r.Status != 200 {
		t.Fatalf("queue: %d %s", r.Status, r.Body)
	}
	verifyLedger(t, e)
}
