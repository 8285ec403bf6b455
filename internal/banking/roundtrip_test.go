package banking_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestRoundTrip sends the same pacs.008 once as XML (prefixed, in an AppHdr
// envelope) and once as the JSON envelope, each to a fresh payd with the
// same participants, and requires the same transfers and the same pacs.002
// (the report's own id and time aside).
func TestRoundTrip(t *testing.T) {
	dir := filepath.Join("iso20022", "testdata", "roundtrip")
	xmlBody, err := os.ReadFile(filepath.Join(dir, "transfer.xml"))
	if err != nil {
		t.Fatal(err)
	}
	jsonBody, err := os.ReadFile(filepath.Join(dir, "transfer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Transactions []struct {
			UETR string `json:"uetr"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(jsonBody, &env); err != nil {
		t.Fatal(err)
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		// run submits the message in one format, then sends the identical
		// message in the other format, which replays the same report.
		run := func(e *apptest.Env, first string) (xmlRep, jsonRep []byte, rows []transferRow) {
			bank := newBank(t, e, "Bank", "BANKDJJDXXX", false)
			newBank(t, e, "Creditor bank", "CACEDJJDXXX", false)
			newBank(t, e, "Other creditor bank", "BCIMDJJD", false)
			fund(t, e, bank, 1_000_000)
			post := func(format string) []byte {
				var r *apptest.Response
				if format == "xml" {
					r = postXML(e, bank.SK, "/banking/v1/transfers", xmlBody)
				} else {
					r = postJSON(e, bank.SK, "/banking/v1/transfers", jsonBody)
				}
				if r.Status != 200 {
					t.Fatalf("%s: %d %s", format, r.Status, r.Body)
				}
				return r.Body
			}
			if first == "xml" {
				xmlRep = post("xml")
				jsonRep = post("json")
			} else {
				jsonRep = post("json")
				xmlRep = post("xml")
			}
			for _, tx := range env.Transactions {
				row := getTransfer(t, e, bank.SK, tx.UETR)
				row.CreatedAt, row.SettledAt = "", nil
				rows = append(rows, row)
			}
			verifyLedger(t, e)
			return xmlRep, jsonRep, rows
		}
		xmlA, jsonA, rowsA := run(e, "xml")
		xmlB, jsonB, rowsB := run(apptest.Start(t, e.Engine), "json")
		var a, b jsonReport
		if err := json.Unmarshal(jsonA, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(jsonB, &b); err != nil {
			t.Fatal(err)
		}
		// Within one payd the second format replayed the first report.
		if !bytes.Contains(xmlA, []byte("<MsgId>"+a.MsgID+"</MsgId>")) || !bytes.Contains(xmlB, []byte("<MsgId>"+b.MsgID+"</MsgId>")) {
			t.Fatalf("the other format did not replay the report:\n%s\n%s\n%s\n%s", xmlA, jsonA, xmlB, jsonB)
		}
		// Across the two, everything but the report's id and time agrees.
		idA, idB := a.MsgID, b.MsgID
		a.MsgID, a.CreatedAt, b.MsgID, b.CreatedAt = "", "", "", ""
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("JSON reports differ:\n%s\n%s", jsonA, jsonB)
		}
		if !bytes.Equal(stripHeader(xmlA, idA), stripHeader(xmlB, idB)) {
			t.Fatalf("XML reports differ:\n%s\n%s", xmlA, xmlB)
		}
		if b.GroupStatus != "PART" || b.Transactions[0].Status != "ACSC" || b.Transactions[2].StatusReason.Code != "AM12" {
			t.Fatalf("report: %s", jsonB)
		}
		if !reflect.DeepEqual(rowsA, rowsB) {
			t.Fatalf("transfers differ:\nxml  %+v\njson %+v", rowsA, rowsB)
		}
		if *rowsA[0].RemittanceInfo != "Invoice 7 March" || rowsA[1].RemittanceInfo != nil || rowsA[1].AmountMinor != 100 {
			t.Fatalf("rows: %+v", rowsA)
		}
	})
}

// stripHeader blanks a pacs.002's own MsgId and CreDtTm, and the times of
// the run (acceptance date-time, settlement date).
func stripHeader(doc []byte, msgID string) []byte {
	doc = bytes.Replace(doc, []byte("<MsgId>"+msgID+"</MsgId>"), []byte("<MsgId/>"), 1)
	doc = runTimes.ReplaceAll(doc, []byte("<$1/>"))
	return creDtTm.ReplaceAll(doc, []byte("<GrpHdr>$1<CreDtTm/>"))
}

var runTimes = regexp.MustCompile(`<(AccptncDtTm|Dt)>[^<]*</(AccptncDtTm|Dt)>`)

var creDtTm = regexp.MustCompile(`<GrpHdr>(\s*<MsgId/>\s*)<CreDtTm>[^<]*</CreDtTm>`)
