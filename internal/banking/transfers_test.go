package banking_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/merchants"
)

// world is one payd with participant banks, shared by the scenario subtests
// of TestTransfers (starting payd once per engine keeps the suite fast).
type world struct {
	e    *apptest.Env
	docs *xmlDocs
	// bank is the corpus caller (BANKDJJDXXX), cace and bcim the corpus
	// creditor agents; deferred settles in the background; third takes part
	// in no transfer of the others.
	bank, cace, bcim, deferred, third bank
}

// TestTransfers drives every path of the bank transfer service over HTTP on
// both engines: the iso20022 corpus, the service-level rules, permissions,
// deferred settlement, screening holds and their review, returns and
// cancellations; then validates every XML payd emitted with xmllint and
// checks the ledger.
func TestTransfers(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		w := &world{e: e, docs: &xmlDocs{}}
		banks := map[string]bank{}
		t.Run("corpus", func(t *testing.T) {
			banks = runCorpus(t, e, w.docs)
		})
		if t.Failed() {
			return
		}
		w.bank, w.cace, w.bcim = banks["BANKDJJDXXX"], banks["CACEDJJDXXX"], banks["BCIMDJJD"]
		w.deferred = newBank(t, e, "Deferred bank", "DEFRDJJDXXX", true)
		w.third = newBank(t, e, "Third bank", "THRDDJJDXXX", false)
		t.Run("service rules", w.serviceRules)
		t.Run("permissions", w.permissions)
		t.Run("deferred settlement", w.deferredSettlement)
		t.Run("screening hold", w.screeningHold)
		t.Run("returns", w.returns)
		t.Run("returns pacs.004.001.10", w.returnsPacs004v10)
		t.Run("races", w.races)
		t.Run("xmllint", func(t *testing.T) {
			w.docs.requireCoverage(t, "ACSC", "ACSP", "ACWP", "RJCT", "PART",
				"FF01", "CH16", "AC01", "RC01", "AM01", "AM03", "AM04", "AM12", "DUPL", "RR04")
			w.docs.lint(t)
		})
		verifyLedger(t, e)
	}, withSanctions(t))
}

func (w *world) serviceRules(t *testing.T) {
	e := w.e
	before := available(t, e, w.bank)

	// A message, then the identical message again (in the other format,
	// too): the first report is replayed and nothing moves twice.
	msg := message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 700})
	first := postJSON(e, w.bank.SK, "/banking/v1/transfers", msg)
	if first.Status != 200 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	again := postJSON(e, w.bank.SK, "/banking/v1/transfers", msg)
	if again.Status != 200 || !bytes.Equal(first.Body, again.Body) {
		t.Fatalf("identical message: %d, body differs:\n%s\n%s", again.Status, first.Body, again.Body)
	}
	if got := available(t, e, w.bank); got != before-700 {
		t.Fatalf("debtor balance %d after a replay, want %d", got, before-700)
	}
	// The debtor's balance history names the transfer by its UETR, the id
	// the merchant knows, and finds it by that.
	uetr := uetrOf(msg, 0)
	hist := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance_transactions?source=" + uetr, Key: w.bank.SK})
	var moves struct {
		Data []struct {
			Type        string `json:"type"`
			AmountMinor int64  `json:"amount_minor"`
			Source      string `json:"source"`
		} `json:"data"`
	}
	hist.JSON(t, &moves)
	if hist.Status != 200 || len(moves.Data) != 1 || moves.Data[0].Type != "transfer" || moves.Data[0].AmountMinor != -700 || moves.Data[0].Source != uetr {
		t.Fatalf("balance transactions of the transfer %s: %d %s", uetr, hist.Status, hist.Body)
	}

	// The same MsgId with a different message: RJCT DUPL, nothing stored.
	other := message(msg["msg_id"].(string), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC, Amount: 800})
	rep := submitJSON(t, e, w.bank.SK, other, 200)
	if rep.GroupStatus != "RJCT" || rep.StatusReason == nil || rep.StatusReason.Code != "DUPL" ||
		rep.Transactions[0].Status != "RJCT" || rep.Transactions[0].StatusReason.Code != "DUPL" {
		t.Fatalf("msg_id reused: %+v", rep)
	}
	if r := e.Get("/banking/v1/transfers/" + uetrOf(other, 0)); r.Status != 403 {
		t.Fatalf("a non-participant reading a transfer: %d", r.Status)
	}
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetrOf(other, 0), Key: w.bank.SK}); r.Status != 404 {
		t.Fatalf("the rejected duplicate was stored: %d %s", r.Status, r.Body)
	}

	// A UETR already used, under a new MsgId: RJCT DUPL (XML answer kept
	// for xmllint).
	dupl := postXML(e, w.bank.SK, "/banking/v1/transfers", xmlMessage(newMsgID(),
		xmlTx{UETR: uetrOf(msg, 0), DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC}))
	w.docs.add("dupl uetr", dupl.Body)
	if _, got := readReport(t, "xml", dupl.Body); dupl.Status != 200 || got[0].status != "RJCT" || got[0].reason != "DUPL" {
		t.Fatalf("UETR reused: %d %s", dupl.Status, dupl.Body)
	}

	// AM04: a poor bank pays more than it holds; a second message pays what
	// it can and is refused the rest (PART).
	poor := newBank(t, e, "Poor bank", "POORDJJDXXX", false)
	fund(t, e, poor, 1500)
	am04 := postXML(e, poor.SK, "/banking/v1/transfers", xmlMessage(newMsgID(),
		xmlTx{Amount: "1600", DebtorAgent: poor.BIC, CreditorAgent: w.cace.BIC}))
	w.docs.add("am04", am04.Body)
	if _, got := readReport(t, "xml", am04.Body); got[0].status != "RJCT" || got[0].reason != "AM04" {
		t.Fatalf("AM04: %s", am04.Body)
	}
	part := message(newMsgID(), tx{DebtorAgent: poor.BIC, CreditorAgent: w.cace.BIC, Amount: 1000},
		tx{DebtorAgent: poor.BIC, CreditorAgent: w.cace.BIC, Amount: 1000})
	rep = submitJSON(t, e, poor.SK, part, 200)
	if rep.GroupStatus != "PART" || rep.Transactions[0].Status != "ACSC" || rep.Transactions[1].StatusReason.Code != "AM04" {
		t.Fatalf("partly funded: %+v", rep)
	}
	if got := available(t, e, poor); got != 500 {
		t.Fatalf("poor bank holds %d, want 500", got)
	}
	row := getTransfer(t, e, poor.SK, uetrOf(part, 1))
	if row.Status != "RJCT" || row.StatusReason == nil || row.StatusReason.Code != "AM04" || row.StatusReason.Text == "" || row.SettledAt != nil {
		t.Fatalf("AM04 row: %+v", row)
	}
	// A transfer rejected before reaching the creditor agent is not its
	// business; one that settled is.
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetrOf(part, 1), Key: w.cace.SK}); r.Status != 404 {
		t.Fatalf("creditor agent sees a transfer it never received: %d", r.Status)
	}
	if row := getTransfer(t, e, w.cace.SK, uetrOf(part, 0)); row.Status != "ACSC" {
		t.Fatalf("creditor agent's view: %+v", row)
	}

	// Unparseable bodies are errors, not reports; other content types 415.
	for name, c := range map[string]struct {
		ct, body string
		status   int
		code     string
	}{
		"empty":       {"application/json", " ", 400, "body_missing"},
		"truncated":   {"application/json", `{"msg_id":`, 400, "message_malformed"},
		"doctype":     {"application/xml", `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x "y">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">&x;</Document>`, 400, "xml_markup_forbidden"},
		"text/plain":  {"text/plain", "hello", 415, "unsupported_media_type"},
		"pacs.002 in": {"application/xml", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"/>`, 400, "message_unsupported"},
	} {
		r := e.Do(apptest.Request{Method: "POST", Path: "/banking/v1/transfers", Key: w.bank.SK, Body: []byte(c.body), Headers: map[string]string{"Content-Type": c.ct}})
		if r.Status != c.status || r.ErrorCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
		}
	}
}

func (w *world) permissions(t *testing.T) {
	e := w.e
	msg := message(newMsgID(), tx{DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC})
	// Not a participant.
	if r := postJSON(e, e.SK, "/banking/v1/transfers", msg); r.Status != 403 || r.ErrorCode() != "permission_denied" {
		t.Fatalf("non-participant: %d %s", r.Status, r.Body)
	}
	// A participant sending as another bank; nothing is written.
	if r := postJSON(e, w.cace.SK, "/banking/v1/transfers", msg); r.Status != 403 || r.ErrorCode() != "permission_denied" {
		t.Fatalf("debtor agent is not the caller: %d %s", r.Status, r.Body)
	}
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetrOf(msg, 0), Key: w.cace.SK}); r.Status != 404 {
		t.Fatalf("refused transfer stored: %d", r.Status)
	}
	// The 8-character BIC is the same bank as BIC+XXX.
	short := message(newMsgID(), tx{DebtorAgent: "BANKDJJD", CreditorAgent: "CACEDJJD"})
	if rep := submitJSON(t, e, w.bank.SK, short, 200); rep.Transactions[0].Status != "ACSC" {
		t.Fatalf("BIC8: %+v", rep)
	}
	// Only the two agents see a transfer.
	uetr := uetrOf(short, 0)
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetr, Key: w.third.SK}); r.Status != 404 {
		t.Fatalf("a third bank sees the transfer: %d", r.Status)
	}
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetr, Key: w.third.SK, Headers: map[string]string{"Accept": "application/xml"}}); r.Status != 404 {
		t.Fatalf("a third bank sees the report: %d", r.Status)
	}
	// Live mode is another world: the test-mode transfer is 404 to the same
	// bank's live key, and a live message finds no live funds (AM04).
	ctx := context.Background()
	e.Main.Merchants.SetKYC(ctx, w.bank.MerchantID, "approved")
	if err := e.Main.Merchants.ConnectProvider(ctx, w.bank.MerchantID, "bank_a", merchants.ProviderConfig{
		BaseURL: "http://127.0.0.1:9/bank_a", APIKey: "k", CallbackSecret: "c"}); err != nil {
		t.Fatal(err)
	}
	live, err := e.Main.Merchants.CreateKey(ctx, w.bank.MerchantID, true, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetr, Key: live.Secret}); r.Status != 404 {
		t.Fatalf("live key sees a test transfer: %d", r.Status)
	}
	liveMsg := message(newMsgID(), tx{UETR: uetr, DebtorAgent: w.bank.BIC, CreditorAgent: w.cace.BIC})
	if rep := submitJSON(t, e, live.Secret, liveMsg, 200); rep.Transactions[0].StatusReason == nil || rep.Transactions[0].StatusReason.Code != "AM04" {
		t.Fatalf("live message without live funds: %+v", rep)
	}

	// The list shows the caller's transfers only.
	r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers?limit=100&role=creditor", Key: w.third.SK})
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"data":[]`)) {
		t.Fatalf("third bank's list: %d %s", r.Status, r.Body)
	}
	r = e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers?limit=1&status=ACSC", Key: w.bank.SK})
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"has_more":true`)) || !bytes.Contains(r.Body, []byte(uetr)) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	// Bodies never reach the logs.
	e.RequireSecretsAbsent("DJ2100010000000154000100186", "GB82WEST12345698765432", "Omar Farah Trading SARL")
}

// eventsFor lists the events about a transfer delivered to a merchant.
func eventsFor(t *testing.T, e *apptest.Env, merchantID, uetr string) []string {
	t.Helper()
	evs, err := events.ForObject(context.Background(), e.Main.DB, uetr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.MerchantID == merchantID {
			out = append(out, ev.Type)
		}
	}
	return out
}
