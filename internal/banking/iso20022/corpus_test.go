package iso20022

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

// corpusManifest is testdata/corpus/manifest.json. It is written so that a
// service-level test can reuse it: see its description and left_to_service.
type corpusManifest struct {
	Description     string        `json:"description"`
	Participants    []corpusBank  `json:"participants"`
	NotParticipants []string      `json:"not_participants"`
	LeftToService   []string      `json:"left_to_service"`
	Entries         []corpusEntry `json:"entries"`
}

type corpusBank struct {
	BIC  string `json:"bic"`
	Role string `json:"role"`
}

type corpusEntry struct {
	File         string     `json:"file"`
	Format       string     `json:"format"` // xml or json
	Description  string     `json:"description"`
	Outcome      string     `json:"outcome"` // parse_error, FF01 or rules
	CallerBIC    string     `json:"caller_bic"`
	MsgID        string     `json:"msg_id"`
	Transactions []corpusTx `json:"transactions"`
}

type corpusTx struct {
	Index         int    `json:"index"`
	UETR          string `json:"uetr"`
	EndToEndID    string `json:"end_to_end_id"`
	Rules         string `json:"rules"` // ok or a reason code
	AmountMinor   int64  `json:"amount_minor"`
	Currency      string `json:"currency"`
	CreditorAgent string `json:"creditor_agent"`
	Service       struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"service"`
}

func loadCorpus(t testing.TB) corpusManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "corpus", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m corpusManifest
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeCorpusFile(t testing.TB, e corpusEntry) ([]byte, Message, error) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "corpus", e.File))
	if err != nil {
		t.Fatal(err)
	}
	if e.Format == "json" {
		m, err := DecodeJSON(body)
		return body, m, err
	}
	m, err := DecodeXML(body)
	return body, m, err
}

func TestCorpus(t *testing.T) {
	m := loadCorpus(t)
	if len(m.Entries) < 30 {
		t.Fatalf("corpus has %d messages, want at least 30", len(m.Entries))
	}
	for _, e := range m.Entries {
		t.Run(e.File, func(t *testing.T) {
			_, msg, err := decodeCorpusFile(t, e)
			var parseErr *ParseError
			var schemaErr *SchemaError
			switch e.Outcome {
			case "parse_error":
				if !errors.As(err, &parseErr) {
					t.Fatalf("want a *ParseError, got %v", err)
				}
				return
			case "FF01":
				if !errors.As(err, &schemaErr) {
					t.Fatalf("want a *SchemaError (FF01), got %v", err)
				}
				rep := GroupRejection("RPT", reportTime, msg, schemaErr.Reason())
				if rep.GroupStatus() != StatusRJCT || rep.GroupReason.Code != ReasonFF01 {
					t.Fatalf("group rejection: %+v", rep)
				}
				if _, err := EncodeStatusReport(rep); err != nil {
					t.Fatalf("FF01 report does not encode: %v", err)
				}
				checkReferences(t, e, msg)
				return
			case "rules":
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
			default:
				t.Fatalf("unknown outcome %q", e.Outcome)
			}
			if msg.MsgID != e.MsgID {
				t.Errorf("MsgID = %q, want %q", msg.MsgID, e.MsgID)
			}
			checkReferences(t, e, msg)
			for i, v := range Validate(msg) {
				want := e.Transactions[i].Rules
				got := "ok"
				if !v.OK() {
					got = v.Reason.Code
				}
				if got != want {
					t.Errorf("transaction %d: rules = %s (%s), want %s", i, got, v.Reason.Detail, want)
				}
				if want == "ok" && (msg.Transactions[i].AmountMinor != e.Transactions[i].AmountMinor || msg.Transactions[i].CreditorAgent != e.Transactions[i].CreditorAgent) {
					t.Errorf("transaction %d: amount %d / creditor agent %s differ from the manifest", i, msg.Transactions[i].AmountMinor, msg.Transactions[i].CreditorAgent)
				}
			}
		})
	}
}

func checkReferences(t *testing.T, e corpusEntry, msg Message) {
	t.Helper()
	if len(msg.Transactions) != len(e.Transactions) {
		t.Fatalf("%d transactions, manifest lists %d", len(msg.Transactions), len(e.Transactions))
	}
	for i, tx := range e.Transactions {
		if msg.Transactions[i].UETR != tx.UETR || msg.Transactions[i].EndToEndID != tx.EndToEndID {
			t.Errorf("transaction %d: references %q/%q, manifest %q/%q", i, msg.Transactions[i].UETR, msg.Transactions[i].EndToEndID, tx.UETR, tx.EndToEndID)
		}
	}
}

// TestCorpusAgreesWithXMLLint checks the manifest's FF01 / rules split of the
// XML corpus against xmllint and the official XSD, so the corpus itself is
// trustworthy.
func TestCorpusAgreesWithXMLLint(t *testing.T) {
	lint := testutil.Tool(t, "libxml2-utils", "xmllint")
	xsd := testutil.TestData(t, "iso20022", "xsd", "pacs.008.001.08.xsd")
	dir := t.TempDir()
	for _, e := range loadCorpus(t).Entries {
		if e.Format != "xml" || e.Outcome == "parse_error" {
			continue
		}
		body, err := os.ReadFile(filepath.Join("testdata", "corpus", e.File))
		if err != nil {
			t.Fatal(err)
		}
		doc := documentElement(t, body)
		p := filepath.Join(dir, strings.ReplaceAll(e.File, "/", "_"))
		if err := os.WriteFile(p, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lint, "--noout", "--schema", xsd, p).CombinedOutput()
		if valid := err == nil; valid != (e.Outcome == "rules") {
			t.Errorf("%s: xmllint valid=%v but manifest says %s\n%s", e.File, valid, e.Outcome, out)
		}
	}
}

// documentElement cuts the Document element out of a message; the corpus
// declares the Document's namespace on the Document itself.
func documentElement(t *testing.T, body []byte) []byte {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(body))
	depth, start := 0, int64(-1)
	for {
		before := d.InputOffset()
		tok, err := d.RawToken()
		if err != nil {
			t.Fatalf("no Document: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			depth++
			if tk.Name.Local == "Document" && start < 0 {
				start = before
			}
		case xml.EndElement:
			depth--
			if tk.Name.Local == "Document" && start >= 0 {
				return body[start:d.InputOffset()]
			}
		}
	}
}
