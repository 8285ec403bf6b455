package banking_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// The pacs.008 corpus of the iso20022 package (testdata/corpus/manifest.json)
// names, for each message, the status and reason the banking service must
// answer when its participants exist and the caller is funded.
type corpusManifest struct {
	Participants []struct {
		BIC string `json:"bic"`
	} `json:"participants"`
	NotParticipants []string      `json:"not_participants"`
	Entries         []corpusEntry `json:"entries"`
}

type corpusEntry struct {
	File         string `json:"file"`
	Format       string `json:"format"`
	Outcome      string `json:"outcome"`
	CallerBIC    string `json:"caller_bic"`
	MsgID        string `json:"msg_id"`
	Transactions []struct {
		UETR    string `json:"uetr"`
		Service struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"service"`
	} `json:"transactions"`
}

const corpusDir = "iso20022/testdata/corpus"

func loadCorpus(t *testing.T) corpusManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corpusDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m corpusManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// xmlReport is the part of a pacs.002.001.10 the tests read.
type xmlReport struct {
	XMLName xml.Name `xml:"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10 Document"`
	Rpt     struct {
		Grp struct {
			OrgnlMsgID string `xml:"OrgnlMsgId"`
			GrpSts     string `xml:"GrpSts"`
			Rsn        []struct {
				Cd string `xml:"Rsn>Cd"`
			} `xml:"StsRsnInf"`
		} `xml:"OrgnlGrpInfAndSts"`
		Txs []struct {
			UETR   string `xml:"OrgnlUETR"`
			Status string `xml:"TxSts"`
			Rsn    []struct {
				Cd string `xml:"Rsn>Cd"`
			} `xml:"StsRsnInf"`
		} `xml:"TxInfAndSts"`
	} `xml:"FIToFIPmtStsRpt"`
}

// outcome is one transaction's answer, whatever the format.
type outcome struct{ uetr, status, reason string }

// readReport reads the per-transaction outcomes of a pacs.002 in either
// format.
func readReport(t *testing.T, format string, body []byte) (group string, txs []outcome) {
	t.Helper()
	if format == "xml" {
		var rep xmlReport
		if err := xml.Unmarshal(body, &rep); err != nil {
			t.Fatalf("pacs.002 XML: %v\n%s", err, body)
		}
		for _, x := range rep.Rpt.Txs {
			o := outcome{uetr: x.UETR, status: x.Status}
			if len(x.Rsn) > 0 {
				o.reason = x.Rsn[0].Cd
			}
			txs = append(txs, o)
		}
		return rep.Rpt.Grp.GrpSts, txs
	}
	var rep jsonReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("pacs.002 JSON: %v\n%s", err, body)
	}
	for _, x := range rep.Transactions {
		o := outcome{uetr: x.UETR, status: x.Status}
		if x.StatusReason != nil {
			o.reason = x.StatusReason.Code
		}
		txs = append(txs, o)
	}
	return rep.GroupStatus, txs
}

// runCorpus sends every corpus message through POST /banking/v1/transfers as
// the manifest's caller and checks each transaction's status and reason, and
// that the transfers it settled can be read back. It returns the participants
// it created, by BIC.
func runCorpus(t *testing.T, e *apptest.Env, docs *xmlDocs) map[string]bank {
	m := loadCorpus(t)
	banks := map[string]bank{}
	for _, p := range m.Participants {
		banks[p.BIC] = newBank(t, e, "Bank "+p.BIC, p.BIC, false)
	}
	caller := banks[m.Entries[0].CallerBIC]
	fund(t, e, caller, 10_000_000)
	for _, entry := range m.Entries {
		t.Run(entry.File, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(corpusDir, entry.File))
			if err != nil {
				t.Fatal(err)
			}
			key := banks[entry.CallerBIC].SK
			var r *apptest.Response
			if entry.Format == "xml" {
				r = postXML(e, key, "/banking/v1/transfers", body)
			} else {
				r = postJSON(e, key, "/banking/v1/transfers", body)
			}
			if entry.Outcome == "parse_error" {
				if r.Status != 400 || r.ErrorCode() == "" {
					t.Fatalf("want a 400 error, got %d %s", r.Status, r.Body)
				}
				if bytes.Contains(r.Body, body[:min(len(body), 60)]) {
					t.Fatal("the error echoes the body")
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if entry.Format == "xml" {
				docs.add("corpus "+entry.File, r.Body)
			}
			group, got := readReport(t, entry.Format, r.Body)
			if len(got) != len(entry.Transactions) {
				t.Fatalf("%d transactions in the report, manifest lists %d:\n%s", len(got), len(entry.Transactions), r.Body)
			}
			statuses := map[string]bool{}
			for i, want := range entry.Transactions {
				statuses[want.Service.Status] = true
				if got[i].status != want.Service.Status || got[i].reason != want.Service.Reason {
					t.Errorf("transaction %d: %s %s, want %s %s", i, got[i].status, got[i].reason, want.Service.Status, want.Service.Reason)
				}
			}
			wantGroup := "RJCT" // a message without transactions is rejected whole
			if len(entry.Transactions) > 0 {
				wantGroup = entry.Transactions[0].Service.Status
			}
			if len(statuses) > 1 {
				wantGroup = "PART"
			}
			if group != wantGroup {
				t.Errorf("group status %s, want %s", group, wantGroup)
			}
			for i, want := range entry.Transactions {
				if want.Service.Status == "ACSC" {
					row := getTransfer(t, e, key, want.UETR)
					if row.Status != "ACSC" || row.SettledAt == nil || row.MsgID != entry.MsgID {
						t.Errorf("transaction %d: row %+v", i, row)
					}
				}
			}
		})
	}
	return banks
}
