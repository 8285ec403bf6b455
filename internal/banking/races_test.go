package banking_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// parallel runs fn n times at once and returns the responses.
func parallel(n int, fn func(i int) *apptest.Response) []*apptest.Response {
	out := make([]*apptest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = fn(i)
		}()
	}
	wg.Wait()
	return out
}

// races: concurrent requests that compete for one MsgId, one UETR, one
// transfer's remaining amount or one held transfer: exactly the right number
// win, and money moves once.
func (w *world) races(t *testing.T) {
	e := w.e
	const n = 8

	// The same message n times at once: one is processed, all answers agree.
	before := available(t, e, w.bank)
	msg := message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 10})
	rs := parallel(n, func(int) *apptest.Response { return postJSON(e, w.bank.SK, "/banking/v1/transfers", msg) })
	for _, r := range rs {
		if r.Status != 200 || !bytes.Equal(r.Body, rs[0].Body) {
			t.Fatalf("racing identical messages: %d %s vs %s", r.Status, r.Body, rs[0].Body)
		}
	}
	if got := available(t, e, w.bank); got != before-10 {
		t.Fatalf("debited %d, want 10", before-got)
	}

	// n messages with the same UETR: one settles, the others are DUPL.
	uetr := newUETR()
	rs = parallel(n, func(int) *apptest.Response {
		return postJSON(e, w.bank.SK, "/banking/v1/transfers", message(newMsgID(), tx{UETR: uetr, DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 10}))
	})
	settled, dupl := 0, 0
	for _, r := range rs {
		_, got := readReport(t, "json", r.Body)
		switch {
		case got[0].status == "ACSC":
			settled++
		case got[0].reason == "DUPL":
			dupl++
		}
	}
	if settled != 1 || dupl != n-1 {
		t.Fatalf("racing UETR: %d settled, %d DUPL", settled, dupl)
	}

	// n returns of 150 against 1000: six fit.
	msg = message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 1000})
	submitJSON(t, e, w.bank.SK, msg, 200)
	rs = parallel(n, func(int) *apptest.Response {
		return postJSON(e, w.cace.SK, "/banking/v1/transfers/"+uetrOf(msg, 0)+"/return", map[string]any{"reason_code": "AC04", "reason_text": "x", "amount_minor": 150})
	})
	ok, refused := 0, 0
	for _, r := range rs {
		switch {
		case r.Status == 200:
			ok++
		case r.Status == 409 && r.ErrorCode() == "amount_exceeds_remaining":
			refused++
		default:
			t.Fatalf("racing return: %d %s", r.Status, r.Body)
		}
	}
	if row := getTransfer(t, e, w.cace.SK, uetrOf(msg, 0)); ok != 6 || refused != n-6 || row.ReturnedAmountMinor != 900 {
		t.Fatalf("racing returns: %d ok, %d refused, %d returned", ok, refused, row.ReturnedAmountMinor)
	}

	// Two banks paying each other at once (ordered locks, no deadlock).
	fund(t, e, w.cace, 1000)
	bankBefore, caceBefore := available(t, e, w.bank), available(t, e, w.cace)
	rs = parallel(n, func(i int) *apptest.Response {
		from, to := w.bank, w.cace
		if i%2 == 1 {
			from, to = w.cace, w.bank
		}
		return postJSON(e, from.SK, "/banking/v1/transfers", message(newMsgID(),
			tx{DebtorAgent: from.BIC, CreditorAgent: to.BIC, Amount: 5}, tx{DebtorAgent: from.BIC, CreditorAgent: to.BIC, Amount: 7}))
	})
	for _, r := range rs {
		if group, _ := readReport(t, "json", r.Body); r.Status != 200 || group != "ACSC" {
			t.Fatalf("crossing transfers: %d %s", r.Status, r.Body)
		}
	}
	if available(t, e, w.bank) != bankBefore || available(t, e, w.cace) != caceBefore {
		t.Fatal("crossing transfers did not cancel out")
	}

	// Release and reject of one held transfer at once: one wins.
	held := message(newMsgID(), tx{Creditor: "Daniel Moreno", DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 10})
	submitJSON(t, e, w.bank.SK, held, 202)
	rs = parallel(n, func(i int) *apptest.Response {
		decision := []string{"release", "reject"}[i%2]
		return postJSON(e, w.cace.SK, "/banking/v1/transfers/"+uetrOf(held, 0)+"/review", map[string]any{"decision": decision})
	})
	won := 0
	for _, r := range rs {
		switch {
		case r.Status == 200:
			won++
		case r.Status == 409 && r.ErrorCode() == "invalid_state":
		default:
			t.Fatalf("racing review: %d %s", r.Status, r.Body)
		}
	}
	if won != 1 {
		t.Fatalf("%d reviews won", won)
	}
	verifyLedger(t, e)
}
