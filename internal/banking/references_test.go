package banking_test

import (
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// refs are the references a pacs.004 or camt.056 gives for the transfer it
// returns or cancels; an empty field leaves the element out.
type refs struct {
	MsgID, UETR, OrgnlMsgID, EndToEndID, Amount, Ccy string
	// RtrdCcy is the currency of the amount a pacs.004 returns; DJF when
	// empty.
	RtrdCcy string
}

var pacs004Refs = template.Must(template.New("pacs004refs").Parse(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09">
  <PmtRtr>
    <GrpHdr><MsgId>{{.MsgID}}</MsgId><CreDtTm>2026-03-15T08:00:00Z</CreDtTm><NbOfTxs>1</NbOfTxs><SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf></GrpHdr>
    <TxInf>
      <RtrId>RTR-1</RtrId>
      {{if .OrgnlMsgID}}<OrgnlGrpInf><OrgnlMsgId>{{.OrgnlMsgID}}</OrgnlMsgId><OrgnlMsgNmId>pacs.008.001.08</OrgnlMsgNmId></OrgnlGrpInf>{{end}}
      {{if .EndToEndID}}<OrgnlEndToEndId>{{.EndToEndID}}</OrgnlEndToEndId>{{end}}
      {{if .UETR}}<OrgnlUETR>{{.UETR}}</OrgnlUETR>{{end}}
      {{if .Amount}}<OrgnlIntrBkSttlmAmt Ccy="{{.Ccy}}">{{.Amount}}</OrgnlIntrBkSttlmAmt>{{end}}
      <RtrdIntrBkSttlmAmt Ccy="{{if .RtrdCcy}}{{.RtrdCcy}}{{else}}DJF{{end}}">100</RtrdIntrBkSttlmAmt>
      <RtrRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>Account closed</AddtlInf></RtrRsnInf>
    </TxInf>
  </PmtRtr>
</Document>
`))

var camt056Refs = template.Must(template.New("camt056refs").Parse(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.056.001.08">
  <FIToFIPmtCxlReq>
    <Assgnmt>
      <Id>{{.MsgID}}</Id>
      <Assgnr><Agt><FinInstnId><BICFI>DEBTDJJDXXX</BICFI></FinInstnId></Agt></Assgnr>
      <Assgne><Agt><FinInstnId><BICFI>PAYDDJJDXXX</BICFI></FinInstnId></Agt></Assgne>
      <CreDtTm>2026-03-15T08:00:00Z</CreDtTm>
    </Assgnmt>
    <Undrlyg>
      <TxInf>
        {{if .OrgnlMsgID}}<OrgnlGrpInf><OrgnlMsgId>{{.OrgnlMsgID}}</OrgnlMsgId><OrgnlMsgNmId>pacs.008.001.08</OrgnlMsgNmId></OrgnlGrpInf>{{end}}
        {{if .EndToEndID}}<OrgnlEndToEndId>{{.EndToEndID}}</OrgnlEndToEndId>{{end}}
        {{if .UETR}}<OrgnlUETR>{{.UETR}}</OrgnlUETR>{{end}}
        {{if .Amount}}<OrgnlIntrBkSttlmAmt Ccy="{{.Ccy}}">{{.Amount}}</OrgnlIntrBkSttlmAmt>{{end}}
        <CxlRsnInf><Rsn><Cd>DUPL</Cd></Rsn><AddtlInf>Sent twice by mistake</AddtlInf></CxlRsnInf>
      </TxInf>
    </Undrlyg>
  </FIToFIPmtCxlReq>
</Document>
`))

func render(tpl *template.Template, r refs) []byte {
	var b strings.Builder
	if err := tpl.Execute(&b, r); err != nil {
		panic(err)
	}
	return []byte(b.String())
}

// TestReturnReferences: a pacs.004 or camt.056 (XML) or a JSON return or
// cancellation is applied only when every reference it gives names the
// transfer in the URL; a message without OrgnlUETR is refused. Each refusal
// is 400 with param the element (or JSON member) at fault, and leaves the
// transfer and both balances untouched. The same messages with the right
// references are applied.
func TestReturnReferences(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		debtor := newBank(t, e, "Debtor bank", "DEBTDJJDXXX", false)
		creditor := newBank(t, e, "Creditor bank", "CREDDJJDXXX", false)
		fund(t, e, debtor, 100_000)
		msgID := newMsgID()
		msg := message(msgID, tx{DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 1000})
		if rep := submitJSON(t, e, debtor.SK, msg, 200); rep.GroupStatus != "ACSC" {
			t.Fatalf("setup: %+v", rep)
		}
		uetr, other := uetrOf(msg, 0), newUETR()
		right := refs{UETR: uetr, OrgnlMsgID: msgID, EndToEndID: "E2E-1", Amount: "1000", Ccy: "DJF"}
		debtorBefore, creditorBefore := available(t, e, debtor), available(t, e, creditor)

		type attempt struct {
			name, key, action string
			body              any
			param, code       string
		}
		var attempts []attempt
		for _, m := range []struct {
			kind, key, action, prefix string
			tpl                       *template.Template
		}{
			{"pacs.004", creditor.SK, "return", "TxInf[1]/", pacs004Refs},
			{"camt.056", debtor.SK, "cancel", "Undrlyg/TxInf/", camt056Refs},
		} {
			with := func(f func(*refs)) []byte {
				r := right
				r.MsgID = "REF-" + newMsgID()
				f(&r)
				return render(m.tpl, r)
			}
			attempts = append(attempts,
				attempt{m.kind + " without OrgnlUETR", m.key, m.action, with(func(r *refs) { r.UETR = "" }), m.prefix + "OrgnlUETR", "parameter_missing"},
				attempt{m.kind + " naming another UETR", m.key, m.action, with(func(r *refs) { r.UETR = other }), m.prefix + "OrgnlUETR", "reference_mismatch"},
				attempt{m.kind + " naming another OrgnlMsgId", m.key, m.action, with(func(r *refs) { r.OrgnlMsgID = "MSG-OTHER" }), m.prefix + "OrgnlGrpInf/OrgnlMsgId", "reference_mismatch"},
				attempt{m.kind + " naming another OrgnlEndToEndId", m.key, m.action, with(func(r *refs) { r.EndToEndID = "E2E-2" }), m.prefix + "OrgnlEndToEndId", "reference_mismatch"},
				attempt{m.kind + " naming another amount", m.key, m.action, with(func(r *refs) { r.Amount = "999" }), m.prefix + "OrgnlIntrBkSttlmAmt", "reference_mismatch"},
				attempt{m.kind + " naming another currency", m.key, m.action, with(func(r *refs) { r.Amount, r.Ccy = "10.00", "USD" }), m.prefix + "OrgnlIntrBkSttlmAmt/@Ccy", "reference_mismatch"},
			)
			if m.kind == "pacs.004" {
				attempts = append(attempts, attempt{m.kind + " returning another currency", m.key, m.action,
					with(func(r *refs) { r.RtrdCcy = "USD" }), m.prefix + "RtrdIntrBkSttlmAmt/@Ccy", "reference_mismatch"})
			}
			jsonBody := func(k string, v any) map[string]any {
				return map[string]any{"reason_code": "AC04", "reason_text": "Closed account", "amount_minor": 100, k: v}
			}
			for _, j := range []struct {
				member string
				value  any
			}{
				{"original_uetr", other}, {"original_msg_id", "MSG-OTHER"}, {"original_end_to_end_id", "E2E-2"},
				{"original_amount_minor", 999}, {"original_currency", "USD"},
			} {
				attempts = append(attempts, attempt{"JSON " + m.action + " naming another " + j.member, m.key, m.action,
					jsonBody(j.member, j.value), j.member, "reference_mismatch"})
			}
		}
		path := "/banking/v1/transfers/" + uetr + "/"
		for _, a := range attempts {
			var r *apptest.Response
			if b, ok := a.body.([]byte); ok {
				r = postXML(e, a.key, path+a.action, b)
			} else {
				r = postJSON(e, a.key, path+a.action, a.body)
			}
			if r.Status != 400 || r.ErrorCode() != a.code || errorParam(t, r) != a.param {
				t.Errorf("%s: %d %s; want 400 %s naming %s", a.name, r.Status, r.Body, a.code, a.param)
			}
			if row := getTransfer(t, e, debtor.SK, uetr); row.ReturnedAmountMinor != 0 || len(row.Returns) != 0 || row.Status != "ACSC" {
				t.Fatalf("%s: transfer touched: %+v", a.name, row)
			}
		}
		if available(t, e, debtor) != debtorBefore || available(t, e, creditor) != creditorBefore {
			t.Fatal("a refused message moved money")
		}

		// The right references are applied: 100 returned by pacs.004, 100 by
		// JSON with every reference, the rest cancelled by camt.056.
		steps := []struct {
			key, action string
			body        any
			returned    int64
		}{
			{creditor.SK, "return", render(pacs004Refs, refs{MsgID: "RTR-OK", UETR: uetr, OrgnlMsgID: msgID, EndToEndID: "E2E-1", Amount: "1000", Ccy: "DJF"}), 100},
			{creditor.SK, "return", map[string]any{"reason_code": "AC04", "reason_text": "Closed", "amount_minor": 100, "original_uetr": strings.ToUpper(uetr),
				"original_msg_id": msgID, "original_end_to_end_id": "E2E-1", "original_amount_minor": 1000, "original_currency": "DJF"}, 200},
			{debtor.SK, "cancel", render(camt056Refs, refs{MsgID: "CXL-OK", UETR: uetr, OrgnlMsgID: msgID, EndToEndID: "E2E-1", Amount: "1000", Ccy: "DJF"}), 1000},
		}
		for i, s := range steps {
			var r *apptest.Response
			if b, ok := s.body.([]byte); ok {
				r = postXML(e, s.key, path+s.action, b)
			} else {
				r = postJSON(e, s.key, path+s.action, s.body)
			}
			var row transferRow
			r.JSON(t, &row)
			if r.Status != 200 || row.ReturnedAmountMinor != s.returned {
				t.Fatalf("step %d: %d %s", i, r.Status, r.Body)
			}
		}
		if available(t, e, debtor) != debtorBefore+1000 {
			t.Fatal("the money did not come back")
		}
		verifyLedger(t, e)
	})
}

func errorParam(t *testing.T, r *apptest.Response) string {
	m := r.Map(t)
	if e, ok := m["error"].(map[string]any); ok {
		p, _ := e["param"].(string)
		return p
	}
	return ""
}

// TestStatusReportFields: the pacs.002 answering a pacs.008, and the one
// GET returns later, carry AccptncDtTm for accepted transactions,
// FctvIntrBkSttlmDt for settled ones, InstgAgt and InstdAgt, and echo the
// pacs.008's CreDtTm as received; every one validates against the XSD.
func TestStatusReportFields(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		debtor := newBank(t, e, "Debtor bank", "DEBTDJJDXXX", false)
		creditor := newBank(t, e, "Creditor bank", "CREDDJJDXXX", false)
		fund(t, e, debtor, 10_000)
		docs := &xmlDocs{}
		body := xmlMessage(newMsgID(), xmlTx{Amount: "400", DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC},
			xmlTx{Amount: "900000", DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC})
		r := postXML(e, debtor.SK, "/banking/v1/transfers", body)
		if r.Status != 200 {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		docs.add("submit", r.Body)
		_, txs := readReport(t, "xml", r.Body)
		g := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + txs[0].uetr, Key: debtor.SK, Headers: map[string]string{"Accept": "application/xml"}})
		if g.Status != 200 {
			t.Fatalf("GET: %d %s", g.Status, g.Body)
		}
		docs.add("get", g.Body)
		// The creditor agent reads the same report: the agents name the
		// original transaction's agents whoever asks (docs/iso20022.md).
		gc := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + txs[0].uetr, Key: creditor.SK, Headers: map[string]string{"Accept": "application/xml"}})
		if gc.Status != 200 {
			t.Fatalf("GET by the creditor agent: %d %s", gc.Status, gc.Body)
		}
		docs.add("get by creditor", gc.Body)
		for name, doc := range map[string]string{"submit": string(r.Body), "get": string(g.Body), "get by creditor": string(gc.Body)} {
			if instg, instd := elementText(doc, "InstgAgt"), elementText(doc, "InstdAgt"); !strings.Contains(instg, "<BICFI>DEBTDJJDXXX</BICFI>") ||
				!strings.Contains(instd, "<BICFI>CREDDJJDXXX</BICFI>") {
				t.Errorf("%s report: InstgAgt %q, InstdAgt %q; want the debtor agent instructing, the creditor agent instructed", name, instg, instd)
			}
			for _, want := range []string{"<OrgnlCreDtTm>2026-03-14T09:26:50Z</OrgnlCreDtTm>", "<AccptncDtTm>", "<FctvIntrBkSttlmDt>",
				"<InstgAgt>", "<BICFI>DEBTDJJDXXX</BICFI>", "<InstdAgt>", "<BICFI>CREDDJJDXXX</BICFI>"} {
				if !strings.Contains(doc, want) {
					t.Errorf("%s report lacks %s:\n%s", name, want, doc)
				}
			}
		}
		// The rejected transaction (AM04) has no acceptance or settlement.
		rejected := strings.Split(string(r.Body), "<TxInfAndSts>")[2]
		if strings.Contains(rejected, "<AccptncDtTm>") || strings.Contains(rejected, "<FctvIntrBkSttlmDt>") {
			t.Errorf("rejected transaction carries acceptance or settlement:\n%s", rejected)
		}
		docs.lint(t)
	})
}

// TestStatusReportFieldsJSON: the JSON report answering a JSON pacs.008
// carries what the XML one does: original_created_at echoed as received,
// accepted_at for accepted transactions, settlement_date once settled, and
// the instructing and instructed agents; a rejected transaction has no
// acceptance or settlement.
func TestStatusReportFieldsJSON(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		debtor := newBank(t, e, "Debtor bank", "DEBTDJJDXXX", false)
		creditor := newBank(t, e, "Creditor bank", "CREDDJJDXXX", false)
		fund(t, e, debtor, 10_000)
		msg := message(newMsgID(), tx{DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 400},
			tx{DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 900000})
		msg["created_at"] = "2026-03-14T09:26:50.5Z"
		r := postJSON(e, debtor.SK, "/banking/v1/transfers", msg)
		if r.Status != 200 {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		var rep struct {
			OriginalCreatedAt string `json:"original_created_at"`
			Transactions      []struct {
				Status           string `json:"status"`
				AcceptedAt       string `json:"accepted_at"`
				SettlementDate   string `json:"settlement_date"`
				InstructingAgent string `json:"instructing_agent"`
				InstructedAgent  string `json:"instructed_agent"`
			} `json:"transactions"`
		}
		r.JSON(t, &rep)
		if rep.OriginalCreatedAt != "2026-03-14T09:26:50.5Z" {
			t.Errorf("original_created_at %q, want the pacs.008's created_at as received (not re-formatted to milliseconds)", rep.OriginalCreatedAt)
		}
		if len(rep.Transactions) != 2 {
			t.Fatalf("transactions: %s", r.Body)
		}
		ok, rejected := rep.Transactions[0], rep.Transactions[1]
		today := time.Now().UTC().Format("2006-01-02")
		if ok.Status != "ACSC" || ok.AcceptedAt == "" || ok.SettlementDate == "" || ok.SettlementDate > today ||
			ok.InstructingAgent != "DEBTDJJDXXX" || ok.InstructedAgent != "CREDDJJDXXX" {
			t.Errorf("settled transaction: %+v\n%s", ok, r.Body)
		}
		if _, err := time.Parse(time.RFC3339, ok.AcceptedAt); err != nil {
			t.Errorf("accepted_at %q: %v", ok.AcceptedAt, err)
		}
		if rejected.Status != "RJCT" || rejected.AcceptedAt != "" || rejected.SettlementDate != "" ||
			rejected.InstructingAgent != "DEBTDJJDXXX" || rejected.InstructedAgent != "CREDDJJDXXX" {
			t.Errorf("rejected transaction: %+v\n%s", rejected, r.Body)
		}
		verifyLedger(t, e)
	})
}

// elementText returns the content of the first element named name in doc.
func elementText(doc, name string) string {
	_, after, ok := strings.Cut(doc, "<"+name+">")
	if !ok {
		return ""
	}
	inside, _, _ := strings.Cut(after, "</"+name+">")
	return inside
}
