package banking

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/statemachine/statemachinetest"
)

func TestFormatOf(t *testing.T) {
	cases := map[string]struct {
		format Format
		ok     bool
	}{
		"application/json":                  {FormatJSON, true},
		"application/json; charset=utf-8":   {FormatJSON, true},
		"application/xml":                   {FormatXML, true},
		"text/xml; charset=UTF-8":           {FormatXML, true},
		"application/iso20022+xml":          {FormatXML, true},
		"text/plain":                        {0, false},
		"":                                  {0, false},
		"application/x-www-form-urlencoded": {0, false},
	}
	for ct, want := range cases {
		f, err := FormatOf(ct)
		if (err == nil) != want.ok || (want.ok && f != want.format) {
			t.Errorf("%q: %v %v", ct, f, err)
		}
		if err != nil && errs.As(err).Kind != errs.KindUnsupportedMedia {
			t.Errorf("%q: %v is not a 415", ct, err)
		}
	}
}

func TestAcceptsXML(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                 false,
		"*/*":              false,
		"application/json": false,
		"application/xml":  true,
		"text/xml":         true,
		"application/xml;q=0.9, application/json": true,
		"application/json, application/xml":       false,
		"bogus;;, application/xml":                true,
	} {
		if got := AcceptsXML(accept); got != want {
			t.Errorf("AcceptsXML(%q) = %v", accept, got)
		}
	}
}

func TestBICForms(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"BANKDJJD", "BANKDJJDXXX", true},
		{"BANKDJJDXXX", "BANKDJJDXXX", true},
		{"BANKDJJD", "BANKDJJD", true},
		{"BANKDJJD001", "BANKDJJD", false},
		{"BANKDJJD001", "BANKDJJD001", true},
		{"BANKDJJDXXX", "CACEDJJDXXX", false},
		{"", "BANKDJJD", false},
	}
	for _, c := range cases {
		if got := sameBIC(c.a, c.b); got != c.same {
			t.Errorf("sameBIC(%q, %q) = %v", c.a, c.b, got)
		}
		if got := sameBIC(c.b, c.a); got != c.same {
			t.Errorf("sameBIC(%q, %q) = %v (not symmetric)", c.b, c.a, got)
		}
	}
}

// TestTransitions pins the state machine: only held and in-process transfers
// move, and only to ACSC or RJCT.
func TestTransitions(t *testing.T) {
	want := map[string]string{"settle": "ACSP>ACSC", "release": "ACWP>ACSC", "reject": "ACWP>RJCT"}
	if len(machine.Moves) != len(want) {
		t.Fatalf("%d transitions, want %d", len(machine.Moves), len(want))
	}
	for _, tr := range machine.Moves {
		if got := strings.Join(tr.From, ",") + ">" + tr.To; got != want[tr.Name] {
			t.Errorf("%s: %s, want %s", tr.Name, got, want[tr.Name])
		}
	}
	statemachinetest.Check(t, &machine, "transfers")
}

// TestContentHashIgnoresFormat: the same message as XML and JSON is one
// message for duplicate detection; any change in content is another.
func TestContentHashIgnoresFormat(t *testing.T) {
	dir := filepath.Join("iso20022", "testdata", "roundtrip")
	x, _ := os.ReadFile(filepath.Join(dir, "transfer.xml"))
	j, _ := os.ReadFile(filepath.Join(dir, "transfer.json"))
	_, mx, sx, err := ReadTransferMessage("application/xml", x)
	if err != nil || sx != nil {
		t.Fatal(err, sx)
	}
	_, mj, sj, err := ReadTransferMessage("application/json", j)
	if err != nil || sj != nil {
		t.Fatal(err, sj)
	}
	hx, _ := contentHash(mx)
	hj, _ := contentHash(mj)
	if hx != hj {
		t.Fatal("the same message hashes differently as XML and JSON")
	}
	mj.Transactions[1].AmountMinor++
	if h, _ := contentHash(mj); h == hx {
		t.Fatal("a changed amount hashes the same")
	}
}

func TestReadErrors(t *testing.T) {
	cases := []struct {
		name, ct, body string
		status         int
		code           string
	}{
		{"empty", "application/xml", "  ", 400, "body_missing"},
		{"not xml", "application/xml", "<a", 400, "message_malformed"},
		{"entity", "application/xml", `<!DOCTYPE x [<!ENTITY a "b">]><x/>`, 400, "xml_markup_forbidden"},
		{"too large", "application/json", `{"msg_id":"` + strings.Repeat("a", iso20022.MaxMessageBytes) + `"}`, 413, "request_too_large"},
		{"media", "text/csv", "a,b", 415, "unsupported_media_type"},
	}
	for _, c := range cases {
		_, _, _, err := ReadTransferMessage(c.ct, []byte(c.body))
		e := errs.As(err)
		if e == nil || e.Code != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
			continue
		}
		if strings.Contains(e.Message, "ENTITY") || strings.Contains(e.Message, "aaaa") {
			t.Errorf("%s: the error quotes the body: %s", c.name, e.Message)
		}
	}
	if _, err := ReadReturnRequest("application/json", []byte(`{"reason_code":"AC04","reason_text":"x","extra":1}`)); errs.As(err) == nil || errs.As(err).Code != "parameter_unknown" || errs.As(err).Param != "extra" {
		t.Errorf("unknown member: %v", err)
	}
	if _, err := ReadReturnRequest("application/json", []byte(`{"reason_code":"AC04"}`)); errs.As(err) == nil || errs.As(err).Param != "reason_text" {
		t.Errorf("missing reason_text: %v", err)
	}
}

var reportTime = time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)

// fuzzSeeds adds every corpus and return message as a seed.
func fuzzSeeds(f *testing.F, dirs ...string) {
	for _, dir := range dirs {
		err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || strings.HasSuffix(path, "manifest.json") {
				return err
			}
			body, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			ct := "application/json"
			if strings.HasSuffix(path, ".xml") {
				ct = "application/xml"
			}
			f.Add(ct, body)
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
}

// FuzzReadTransferMessage runs arbitrary bodies through what POST
// /banking/v1/transfers does before touching the database: read, the pure
// rules, and the status report in the request's format. Nothing may panic,
// every failure must be an *errs.Error, and every report must encode.
func FuzzReadTransferMessage(f *testing.F) {
	fuzzSeeds(f, filepath.Join("iso20022", "testdata", "corpus"), filepath.Join("iso20022", "testdata", "roundtrip"))
	f.Add("text/xml", []byte(`<Envelope><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"/><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"/></Envelope>`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		format, msg, schemaErr, err := ReadTransferMessage(contentType, body)
		if err != nil {
			if errs.As(err) == nil {
				t.Fatalf("not an *errs.Error: %v", err)
			}
			return
		}
		var rep iso20022.StatusReport
		if schemaErr != nil {
			rep = iso20022.GroupRejection("R", reportTime, msg, schemaErr.Reason())
		} else {
			rep = iso20022.StatusReport{MsgID: "R", CreatedAt: reportTime, OriginalMsgID: msg.MsgID}
			for _, v := range iso20022.Validate(msg) {
				st := iso20022.TxStatus{UETR: v.UETR, EndToEndID: v.EndToEndID, Status: StatusACSC, Reason: v.Reason}
				if !v.OK() {
					st.Status = StatusRJCT
				}
				rep.Transactions = append(rep.Transactions, st)
			}
			if len(rep.Transactions) == 0 {
				return
			}
			if _, err := contentHash(msg); err != nil {
				t.Fatal(err)
			}
		}
		var encErr error
		if format == FormatXML {
			_, encErr = iso20022.EncodeStatusReport(rep)
		} else {
			_, encErr = iso20022.EncodeStatusReportJSON(rep)
		}
		if encErr != nil {
			t.Fatalf("report does not encode: %v", encErr)
		}
	})
}

// FuzzReadReturnRequest runs arbitrary bodies through the return/cancel
// reader: no panic, only *errs.Error failures, and a request it accepts has
// a reason code and a non-negative amount.
func FuzzReadReturnRequest(f *testing.F) {
	fuzzSeeds(f, filepath.Join("iso20022", "testdata", "returns"))
	f.Add("application/json", []byte(`{"reason_code":"AC04","reason_text":"closed","amount_minor":100}`))
	f.Add("application/json", []byte(`{"reason_code":"AC04","reason_text":"closed","amount_minor":1e3}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req, err := ReadReturnRequest(contentType, body)
		if err != nil {
			if errs.As(err) == nil {
				t.Fatalf("not an *errs.Error: %v", err)
			}
			return
		}
		if req.ReasonCode == "" || req.AmountMinor < 0 {
			t.Fatalf("accepted %+v", req)
		}
	})
}
