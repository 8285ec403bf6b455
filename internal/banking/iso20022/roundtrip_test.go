package iso20022

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// renderPacs008 writes m as a pacs.008.001.08 Document (bare, or in an
// Envelope with an AppHdr). Tests and benchmarks use it; payd itself never
// sends a pacs.008.
func renderPacs008(m Message, envelope bool) []byte {
	var b strings.Builder
	esc := func(s string) string {
		var w strings.Builder
		_ = xml.EscapeText(&w, []byte(s))
		return w.String()
	}
	b.WriteString(xml.Header)
	if envelope {
		b.WriteString(`<Envelope><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"><BizMsgIdr>` + esc(m.MsgID) + `</BizMsgIdr></AppHdr>`)
	}
	b.WriteString(`<Document xmlns="` + NamespacePacs008 + `"><FIToFICstmrCdtTrf><GrpHdr>`)
	b.WriteString("<MsgId>" + esc(m.MsgID) + "</MsgId><CreDtTm>" + esc(m.CreatedAtText) + "</CreDtTm><NbOfTxs>" + esc(m.DeclaredTxCount) + "</NbOfTxs>")
	b.WriteString("<SttlmInf><SttlmMtd>" + esc(m.SettlementMethod) + "</SttlmMtd></SttlmInf></GrpHdr>")
	account := func(tag string, p Party) {
		a := p.Account
		if a == "" {
			return
		}
		if p.IBAN {
			b.WriteString("<" + tag + "><Id><IBAN>" + esc(a) + "</IBAN></Id></" + tag + ">")
		} else {
			b.WriteString("<" + tag + "><Id><Othr><Id>" + esc(a) + "</Id></Othr></Id></" + tag + ">")
		}
	}
	for _, tx := range m.Transactions {
		b.WriteString("<CdtTrfTxInf><PmtId><EndToEndId>" + esc(tx.EndToEndID) + "</EndToEndId>")
		if tx.UETR != "" {
			b.WriteString("<UETR>" + esc(tx.UETR) + "</UETR>")
		}
		b.WriteString("</PmtId>")
		b.WriteString(`<IntrBkSttlmAmt Ccy="` + esc(tx.Currency) + `">` + majorAmountText(tx) + "</IntrBkSttlmAmt>")
		b.WriteString("<ChrgBr>" + esc(tx.ChargeBearer) + "</ChrgBr>")
		b.WriteString("<Dbtr><Nm>" + esc(tx.Debtor.Name) + "</Nm></Dbtr>")
		account("DbtrAcct", tx.Debtor)
		b.WriteString("<DbtrAgt><FinInstnId><BICFI>" + esc(tx.DebtorAgent) + "</BICFI></FinInstnId></DbtrAgt>")
		b.WriteString("<CdtrAgt><FinInstnId><BICFI>" + esc(tx.CreditorAgent) + "</BICFI></FinInstnId></CdtrAgt>")
		b.WriteString("<Cdtr><Nm>" + esc(tx.Creditor.Name) + "</Nm></Cdtr>")
		account("CdtrAcct", tx.Creditor)
		if tx.RemittanceInfo != "" {
			b.WriteString("<RmtInf><Ustrd>" + esc(tx.RemittanceInfo) + "</Ustrd></RmtInf>")
		}
		b.WriteString("</CdtTrfTxInf>")
	}
	b.WriteString("</FIToFICstmrCdtTrf></Document>")
	if envelope {
		b.WriteString("</Envelope>")
	}
	return []byte(b.String())
}

// majorAmountText writes a transaction's amount in major units, sub-minor
// fraction included.
func majorAmountText(tx Transaction) string {
	exp := CurrencyExponent(tx.Currency)
	s := strconv.FormatInt(tx.AmountMinor, 10)
	if len(s) <= exp {
		s = strings.Repeat("0", exp-len(s)+1) + s
	}
	s = s[:len(s)-exp] + "." + s[len(s)-exp:] + tx.AmountFraction
	return strings.TrimSuffix(s, ".")
}

// renderJSON writes m as the JSON envelope.
func renderJSON(m Message) []byte {
	type party struct {
		Name    string `json:"name"`
		Account string `json:"account"`
	}
	type txJSON struct {
		UETR           string      `json:"uetr"`
		EndToEndID     string      `json:"end_to_end_id"`
		AmountMinor    json.Number `json:"amount_minor"`
		Currency       string      `json:"currency"`
		ChargeBearer   string      `json:"charge_bearer"`
		Debtor         party       `json:"debtor"`
		DebtorAgent    string      `json:"debtor_agent"`
		Creditor       party       `json:"creditor"`
		CreditorAgent  string      `json:"creditor_agent"`
		RemittanceInfo string      `json:"remittance_info,omitempty"`
	}
	out := struct {
		MsgID      string `json:"msg_id"`
		CreatedAt  string `json:"created_at"`
		Settlement struct {
			Method string `json:"method"`
		} `json:"settlement"`
		Transactions []txJSON `json:"transactions"`
	}{MsgID: m.MsgID, CreatedAt: m.CreatedAtText}
	out.Settlement.Method = m.SettlementMethod
	for _, tx := range m.Transactions {
		amount := strconv.FormatInt(tx.AmountMinor, 10)
		if tx.AmountFraction != "" {
			amount += "." + tx.AmountFraction
		}
		out.Transactions = append(out.Transactions, txJSON{
			UETR: tx.UETR, EndToEndID: tx.EndToEndID, AmountMinor: json.Number(amount), Currency: tx.Currency,
			ChargeBearer: tx.ChargeBearer, Debtor: party{tx.Debtor.Name, tx.Debtor.Account}, DebtorAgent: tx.DebtorAgent,
			Creditor: party{tx.Creditor.Name, tx.Creditor.Account}, CreditorAgent: tx.CreditorAgent, RemittanceInfo: tx.RemittanceInfo,
		})
	}
	b, _ := json.Marshal(out)
	return b
}

// TestRoundTripPair decodes one message written by hand in both formats.
func TestRoundTripPair(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "roundtrip", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fromXML, err := DecodeXML(read("transfer.xml"))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := DecodeJSON(read("transfer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromXML, fromJSON) {
		t.Fatalf("XML and JSON decode differently:\nXML  %+v\nJSON %+v", fromXML, fromJSON)
	}
	if len(fromXML.Transactions) != 3 || fromXML.Transactions[2].AmountFraction != "5" {
		t.Fatalf("unexpected model %+v", fromXML)
	}
}

// TestRoundTripCorpus renders every corpus message whose profile checks pass
// in the other format and requires the identical model back.
func TestRoundTripCorpus(t *testing.T) {
	n := 0
	for _, e := range loadCorpus(t).Entries {
		if e.Outcome != "rules" {
			continue
		}
		_, m, err := decodeCorpusFile(t, e)
		if err != nil {
			t.Fatal(err)
		}
		if hasAmountIssue(m) {
			continue // an unreadable amount has no rendering in either format
		}
		xmlOK, jsonOK := false, false
		for _, envelope := range []bool{false, true} {
			back, err := DecodeXML(renderPacs008(m, envelope))
			var se *SchemaError
			if errors.As(err, &se) {
				break // a value the XML schema cannot carry (a JSON-only fault)
			}
			if err != nil {
				t.Fatalf("%s: XML rendering: %v", e.File, err)
			}
			if !reflect.DeepEqual(back, m) {
				t.Errorf("%s: through XML\n got %+v\nwant %+v", e.File, back, m)
			}
			xmlOK = true
		}
		if m.DeclaredTxCount == strconv.Itoa(len(m.Transactions)) {
			back, err := DecodeJSON(renderJSON(m))
			if err != nil {
				t.Fatalf("%s: JSON rendering: %v", e.File, err)
			}
			// JSON has one account field: an account of IBAN shape is
			// read as an IBAN, whichever element the XML had it in.
			want := m
			want.Transactions = slices.Clone(m.Transactions)
			for i := range want.Transactions {
				tx := &want.Transactions[i]
				tx.Debtor.IBAN, tx.Creditor.IBAN = LooksLikeIBAN(tx.Debtor.Account), LooksLikeIBAN(tx.Creditor.Account)
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("%s: through JSON\n got %+v\nwant %+v", e.File, back, want)
			}
			jsonOK = true
		}
		if xmlOK && jsonOK {
			n++
		}
	}
	if n < 15 {
		t.Fatalf("only %d corpus messages went through both formats", n)
	}
}

func hasAmountIssue(m Message) bool {
	for _, tx := range m.Transactions {
		if tx.AmountIssue != "" {
			return true
		}
	}
	return false
}
