package iso20022

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validBare is a minimal schema- and profile-valid pacs.008.
func validBare(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", "xml", "ok_single_bare.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeXMLParseErrors(t *testing.T) {
	ok := validBare(t)
	body := strings.TrimPrefix(ok, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	deep := `<Envelope><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">` +
		strings.Repeat("<a>", MaxElementDepth) + strings.Repeat("</a>", MaxElementDepth) + "</AppHdr>" + body + "</Envelope>"
	cases := []struct {
		name string
		in   string
		kind error
	}{
		{"empty", "", ErrMalformed},
		{"not xml", "hello", ErrMalformed},
		{"json", `{"msg_id":"x"}`, ErrMalformed},
		{"truncated", ok[:len(ok)-20], ErrMalformed},
		{"doctype", `<!DOCTYPE Document>` + body, ErrForbiddenMarkup},
		{"entity declaration", `<!DOCTYPE d [<!ENTITY e "x">]>` + body, ErrForbiddenMarkup},
		{"billion laughs", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>`, ErrForbiddenMarkup},
		{"undefined entity", strings.Replace(body, "Invoice", "&nbsp;Invoice", 1), ErrMalformed},
		{"processing instruction", strings.Replace(body, "<FIToFICstmrCdtTrf>", "<?php echo 1 ?><FIToFICstmrCdtTrf>", 1), ErrForbiddenMarkup},
		{"stylesheet PI before root", `<?xml version="1.0"?><?xml-stylesheet href="x"?>` + body, ErrForbiddenMarkup},
		{"second xml declaration", body + `<?xml version="1.0"?>`, ErrForbiddenMarkup},
		{"non-UTF-8 encoding", `<?xml version="1.0" encoding="ISO-8859-1"?>` + body, ErrMalformed},
		{"too deep", deep, ErrTooDeep},
		{"too large", ok + strings.Repeat(" ", MaxMessageBytes), ErrTooLarge},
		{"two roots", body + body, ErrMalformed},
		{"text after root", body + "trailing", ErrMalformed},
		{"undeclared prefix", strings.Replace(body, "<Dbtr>", "<x:Dbtr>", 1), ErrMalformed},
		{"mismatched tags", strings.Replace(body, "</Dbtr>", "</Cdtr>", 1), ErrMalformed},
		{"duplicate attribute", strings.Replace(body, `Ccy="DJF"`, `Ccy="DJF" Ccy="EUR"`, 1), ErrMalformed},
		{"pacs.002 document", strings.ReplaceAll(body, "pacs.008.001.08", "pacs.002.001.10"), ErrUnsupportedMessage},
		{"no namespace", strings.Replace(body, ` xmlns="`+NamespacePacs008+`"`, "", 1), ErrUnsupportedMessage},
		{"envelope without AppHdr", "<Envelope>" + body + "</Envelope>", ErrUnsupportedMessage},
		{"envelope with AppHdr only", `<Envelope><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"/></Envelope>`, ErrUnsupportedMessage},
		{"AppHdr in wrong namespace", `<Envelope><AppHdr xmlns="urn:example"/>` + body + "</Envelope>", ErrUnsupportedMessage},
		{"content after the Document", `<Envelope><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"/>` + body + "<Extra/></Envelope>", ErrUnsupportedMessage},
		{"text in the envelope", `<Envelope>text<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"/>` + body + "</Envelope>", ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeXML([]byte(c.in))
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, c.kind) {
				t.Fatalf("got %v, want a *ParseError of kind %v", err, c.kind)
			}
			if strings.Contains(err.Error(), "Amina") || strings.Contains(err.Error(), "Invoice") {
				t.Fatalf("error echoes the body: %v", err)
			}
		})
	}
}

func TestDecodeXMLAcceptedForms(t *testing.T) {
	ok := validBare(t)
	body := strings.TrimPrefix(ok, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	hdr := `<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.03"><Fr/><BizMsgIdr>x</BizMsgIdr></AppHdr>`
	cases := map[string]string{
		"declaration":       ok,
		"no declaration":    body,
		"BOM":               "\xef\xbb\xbf" + ok,
		"comments":          "<!-- a -->" + strings.Replace(body, "<ChrgBr>", "<!-- b --><ChrgBr>", 1) + "<!-- c -->",
		"CDATA":             strings.Replace(body, "<Nm>Amina Hassan</Nm>", "<Nm><![CDATA[Amina Hassan]]></Nm>", 1),
		"envelope":          "<Envelope>" + hdr + body + "</Envelope>",
		"prefixed envelope": `<env:Msg xmlns:env="urn:example:env">` + hdr + body + "</env:Msg>",
		"xsi location":      strings.Replace(body, "<Document ", `<Document xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="x y" `, 1),
		"decimal spaces":    strings.Replace(body, `Ccy="DJF">1500<`, `Ccy="DJF"> 1500 <`, 1),
		"lowercase utf-8":   strings.Replace(ok, `encoding="UTF-8"`, `encoding="utf-8"`, 1),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := DecodeXML([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if v := Validate(m); len(v) != 1 || !v[0].OK() || m.Transactions[0].Debtor.Name != "Amina Hassan" || m.Transactions[0].AmountMinor != 1500 {
				t.Fatalf("decoded %+v, verdicts %+v", m, v)
			}
		})
	}
}

func TestDecodeXMLSchemaErrors(t *testing.T) {
	body := validBare(t)
	cases := []struct {
		name, from, to, path string
	}{
		{"unknown element", "<ChrgBr>", "<Foo/><ChrgBr>", "CdtTrfTxInf[1]/Foo"},
		{"missing required element", "<ChrgBr>SLEV</ChrgBr>", "", "CdtTrfTxInf[1]/Dbtr"},
		{"missing element at the end", "<SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>", "", "GrpHdr"},
		{"element after the message", "</FIToFICstmrCdtTrf>", "</FIToFICstmrCdtTrf><Foo/>", "Document/Foo"},
		{"text in a complex element", "<Dbtr><Nm>", "<Dbtr>x<Nm>", "CdtTrfTxInf[1]/Dbtr"},
		{"element inside a text element", "<Nm>Amina Hassan</Nm>", "<Nm><b>Amina</b></Nm>", "CdtTrfTxInf[1]/Dbtr/Nm/b"},
		{"attribute not allowed", "<ChrgBr>", `<ChrgBr lang="en">`, "CdtTrfTxInf[1]/ChrgBr"},
		{"xsi:type not allowed", "<ChrgBr>", `<ChrgBr xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="x">`, "CdtTrfTxInf[1]/ChrgBr"},
		{"bad currency pattern", `Ccy="DJF"`, `Ccy="djf"`, "CdtTrfTxInf[1]/IntrBkSttlmAmt/@Ccy"},
		{"too many digits", ">1500<", ">1234567890123456789<", "CdtTrfTxInf[1]/IntrBkSttlmAmt"},
		{"not a decimal", ">1500<", ">1,500<", "CdtTrfTxInf[1]/IntrBkSttlmAmt"},
		{"empty choice", "<Id><IBAN>DJ8500010000020015400010286</IBAN></Id>", "<Id></Id>", "CdtTrfTxInf[1]/DbtrAcct/Id"},
		{"both choice branches", "</IBAN></Id>", "</IBAN><Othr><Id>1</Id></Othr></Id>", "CdtTrfTxInf[1]/DbtrAcct/Id/Othr"},
		{"bad date-time", "<CreDtTm>2026-03-14T09:26:50Z", "<CreDtTm>2026-02-30T09:26:50Z", "GrpHdr/CreDtTm"},
		{"NbOfTxs not numeric", "<NbOfTxs>1<", "<NbOfTxs>one<", "GrpHdr/NbOfTxs"},
		{"too many RmtInf lines is fine but Strd out of order", "<RmtInf><Ustrd>", "<RmtInf><Strd/><Ustrd>", "CdtTrfTxInf[1]/RmtInf/Ustrd"},
		{"wrong namespace child", "<ChrgBr>SLEV</ChrgBr>", `<ChrgBr xmlns="urn:other">SLEV</ChrgBr>`, "CdtTrfTxInf[1]/ChrgBr"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(body, c.from, c.to, 1)
			if in == body {
				t.Fatalf("replacement %q not found", c.from)
			}
			m, err := DecodeXML([]byte(in))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SchemaError", err)
			}
			if got := se.Problems[0].Path; got != c.path {
				t.Errorf("path %q, want %q (%v)", got, c.path, se)
			}
			if se.Problems[0].Code != ReasonFF01 || se.Reason().Code != ReasonFF01 {
				t.Errorf("problem code %q", se.Problems[0].Code)
			}
			if m.MsgID != "CORPUS-XML-001" {
				t.Errorf("best-effort MsgID %q", m.MsgID)
			}
		})
	}
}

// TestFacetsAgreeWithLibxml2 pins edge cases of the simple-type checks to what
// xmllint (libxml2) answers for the same values.
func TestFacetsAgreeWithLibxml2(t *testing.T) {
	amount := pacs008Schema.simple["ActiveCurrencyAndAmount_SimpleType"]
	decimals := map[string]bool{
		"1.000000": true, "1.0000001": false, "0000000000000000001": true, "1234567890123456789": false,
		"123456789012345678.00000": true, " 12 ": true, "-0": true, "-0.0": true, "+5": true, ".5": true,
		"5.": true, "-1": false, "1e3": false, "12345678901234567.8": true, "0.00000": true, "": false, ".": false,
	}
	for v, want := range decimals {
		if got := amount.check(v) == ""; got != want {
			t.Errorf("decimal %q: valid=%v, libxml2 says %v", v, got, want)
		}
	}
	dt := pacs008Schema.simple["ISODateTime"]
	dateTimes := map[string]bool{
		"2026-01-01T10:00:00Z": true, "2026-01-01T10:00:00": true, "2026-01-01T24:00:00Z": true,
		"2026-02-29T10:00:00Z": false, "2024-02-29T10:00:00Z": true, "1900-02-29T10:00:00Z": false, "2000-02-29T10:00:00Z": true,
		"0000-01-01T00:00:00Z": false, "2026-01-01T10:00:00.123456789012Z": true, "2026-01-01T10:00:00+14:00": true,
		"2026-01-01T10:00:00+14:01": false, "2026-01-01T10:00:00+15:00": false, " 2026-01-01T10:00:00Z ": false,
		"2026-01-01t10:00:00Z": false, "12026-01-01T10:00:00Z": true, "02026-01-01T10:00:00Z": false,
		"-2026-01-01T10:00:00Z": true, "2026-1-01T10:00:00Z": false, "2026-01-01T10:00:60Z": false, "2026-01-01T10:00:00.Z": false,
		"2026-04-31T10:00:00Z": false,
	}
	for v, want := range dateTimes {
		if got := dt.check(v) == ""; got != want {
			t.Errorf("dateTime %q: valid=%v, libxml2 says %v", v, got, want)
		}
	}
	date := pacs008Schema.simple["ISODate"]
	for v, want := range map[string]bool{"2026-03-14": true, "2026-03-14Z": true, "2026-13-01": false, "2026-03-14T00:00:00": false} {
		if got := date.check(v) == ""; got != want {
			t.Errorf("date %q: valid=%v, want %v", v, got, want)
		}
	}
	tm := pacs008Schema.simple["ISOTime"]
	for v, want := range map[string]bool{"10:00:00": true, "10:00:00.5+01:00": true, "25:00:00": false} {
		if got := tm.check(v) == ""; got != want {
			t.Errorf("time %q: valid=%v, want %v", v, got, want)
		}
	}
	boolean := pacs008Schema.simple["BatchBookingIndicator"]
	for v, want := range map[string]bool{"true": true, "0": true, "yes": false, "TRUE": false} {
		if got := boolean.check(v) == ""; got != want {
			t.Errorf("boolean %q: valid=%v, want %v", v, got, want)
		}
	}
	text := pacs008Schema.simple["Max35Text"]
	if text.check(strings.Repeat("é", 35)) != "" || text.check(strings.Repeat("é", 36)) == "" || text.check("") == "" {
		t.Errorf("Max35Text counts characters, not bytes, and needs one")
	}
}

func TestSchemaTablesAreLinked(t *testing.T) {
	for _, s := range []*schema{pacs008Schema, pacs004Schema, pacs004v10Schema, camt056Schema, pacs002Schema} {
		if s.root.complex == nil {
			t.Errorf("%s: root type not resolved", s.namespace)
		}
		for name, ct := range s.complex {
			for _, e := range ct.elements {
				if e.complex == nil && e.simple == nil {
					t.Errorf("%s: %s/%s unresolved", s.namespace, name, e.name)
				}
			}
		}
	}
}
