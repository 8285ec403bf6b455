package iso20022

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

var reportTime = time.Date(2026, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// uetrN is a fixed, valid UETR numbered n.
func uetrN(n int) string { return fmt.Sprintf("7b5e1c2a-3f4d-4a6b-9c8d-%012d", n) }

func report(txs ...TxStatus) StatusReport {
	return StatusReport{
		MsgID:             "PAYD-RPT-0001",
		CreatedAt:         reportTime,
		OriginalMsgID:     "BANKDJ-MSG-0001",
		OriginalCreatedAt: time.Date(2026, 3, 14, 9, 26, 50, 0, time.UTC),
		Transactions:      txs,
	}
}

func tx(n int, status string, reason StatusReason) TxStatus {
	return TxStatus{UETR: uetrN(n), EndToEndID: "E2E-" + strconv.Itoa(n), Status: status, Reason: reason}
}

// statusReportCases covers every status path payd can emit.
func statusReportCases() map[string]StatusReport {
	cases := map[string]StatusReport{
		"acsc_single": report(tx(1, StatusACSC, StatusReason{})),
		"acsp_single": report(tx(1, StatusACSP, StatusReason{})),
		"acwp_single": report(tx(1, StatusACWP, StatusReason{})),
		"part_multi": report(
			tx(1, StatusACSC, StatusReason{}),
			tx(2, StatusRJCT, NewStatusReason(ReasonAM04, "debtor agent settlement balance is short")),
			tx(3, StatusACWP, StatusReason{}),
			tx(4, StatusACSC, StatusReason{}),
		),
		"rjct_multi_same": report(
			tx(1, StatusRJCT, NewStatusReason(ReasonCH16, "GrpHdr/SttlmInf/SttlmMtd: settlement method must be CLRG")),
			tx(2, StatusRJCT, NewStatusReason(ReasonCH16, "GrpHdr/SttlmInf/SttlmMtd: settlement method must be CLRG")),
		),
		"group_ff01": GroupRejection("PAYD-RPT-0002", reportTime,
			Message{MsgID: "BANKDJ-MSG-0002", Transactions: []Transaction{{UETR: uetrN(1), EndToEndID: "E2E-1"}, {UETR: "not-a-uuid", EndToEndID: strings.Repeat("x", 40)}}},
			(&SchemaError{Problems: []FieldError{{Path: "CdtTrfTxInf[2]/PmtId/UETR", Reason: "does not match the pattern of UUIDv4Identifier"}}}).Reason()),
		"group_ff01_unreadable": GroupRejection("PAYD-RPT-0003", reportTime,
			Message{MsgID: strings.Repeat("M", 36)},
			NewStatusReason(ReasonFF01, "GrpHdr/MsgId: length 36 exceeds maxLength 35")),
		"long_detail": report(tx(1, StatusRJCT, NewStatusReason(ReasonRC01, "CdtTrfTxInf[1]/CdtrAgt/FinInstnId/BICFI: not an ISO 9362 BIC; "+strings.Repeat("the detail goes on and on ", 6)))),
	}
	accepted := time.Date(2026, 3, 14, 9, 26, 52, 120_000_000, time.UTC)
	withAgents := func(st TxStatus) TxStatus {
		st.InstructingAgent, st.InstructedAgent = "BANKDJJDXXX", "CACEDJJD"
		if st.Status != StatusRJCT {
			st.AcceptedAt = accepted
		}
		if st.Status == StatusACSC {
			st.SettledAt = accepted
		}
		return st
	}
	full := report(withAgents(tx(1, StatusACSC, StatusReason{})), withAgents(tx(2, StatusACSP, StatusReason{})),
		withAgents(tx(3, StatusACWP, StatusReason{})), withAgents(tx(4, StatusRJCT, NewStatusReason(ReasonAM04, "short"))))
	full.OriginalCreatedAtText = "2026-03-14T12:26:50.5+03:00" // echoed as received, not re-formatted
	cases["part_accepted_settled_agents"] = full
	var ten []TxStatus
	for i := 1; i <= 10; i++ {
		ten = append(ten, tx(i, StatusACSC, StatusReason{}))
	}
	cases["acsc_ten"] = report(ten...)
	for _, code := range []string{ReasonFF01, ReasonCH16, ReasonAC01, ReasonRC01, ReasonAM01, ReasonAM03, ReasonAM04, ReasonAM12, ReasonDUPL} {
		cases["rjct_"+strings.ToLower(code)] = report(tx(1, StatusRJCT, NewStatusReason(code, "detail for "+code)))
	}
	return cases
}

func sortedNames(m map[string]StatusReport) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n%s", path, got)
	}
}

func TestEncodeStatusReportGolden(t *testing.T) {
	cases := statusReportCases()
	for _, name := range sortedNames(cases) {
		t.Run(name, func(t *testing.T) {
			r := cases[name]
			x, err := EncodeStatusReport(r)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "golden", "pacs002_"+name+".xml"), x)
			j, err := EncodeStatusReportJSON(r)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "golden", "pacs002_"+name+".json"), append(j, '\n'))
			// Every emitted document passes payd's own schema tables.
			res, err := scanXML(x, pacs002Schema)
			if err != nil || len(res.problems) > 0 {
				t.Fatalf("emitted pacs.002 fails the schema tables: %v %v", err, res)
			}
		})
	}
}

// TestEncodeStatusReportXMLLint validates every emitted report with xmllint
// against the official pacs.002.001.10 XSD.
func TestEncodeStatusReportXMLLint(t *testing.T) {
	lint := testutil.Tool(t, "libxml2-utils", "xmllint")
	xsd := testutil.TestData(t, "iso20022", "xsd", "pacs.002.001.10.xsd")
	dir := t.TempDir()
	cases := statusReportCases()
	args := []string{"--noout", "--schema", xsd}
	for _, name := range sortedNames(cases) {
		x, err := EncodeStatusReport(cases[name])
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(p, x, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command(lint, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), " validates"); n != len(cases) {
		t.Fatalf("xmllint validated %d of %d reports:\n%s", n, len(cases), out)
	}
}

// TestStatusReportAcceptanceSettlementAgents: an accepted transaction
// carries AccptncDtTm, a settled one FctvIntrBkSttlmDt, every one InstgAgt
// and InstdAgt, and OrgnlCreDtTm echoes the original's CreDtTm as received.
func TestStatusReportAcceptanceSettlementAgents(t *testing.T) {
	x, err := EncodeStatusReport(statusReportCases()["part_accepted_settled_agents"])
	if err != nil {
		t.Fatal(err)
	}
	doc := string(x)
	for _, want := range []string{
		"<OrgnlCreDtTm>2026-03-14T12:26:50.5+03:00</OrgnlCreDtTm>",
		"<AccptncDtTm>2026-03-14T09:26:52.120Z</AccptncDtTm>",
		"<Dt>2026-03-14</Dt>",
		"<BICFI>BANKDJJDXXX</BICFI>",
		"<BICFI>CACEDJJD</BICFI>",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q:\n%s", want, doc)
		}
	}
	txs := strings.Split(doc, "<TxInfAndSts>")[1:]
	if len(txs) != 4 {
		t.Fatalf("%d transactions", len(txs))
	}
	for i, c := range []struct{ accepted, settled bool }{{true, true}, {true, false}, {true, false}, {false, false}} {
		if got := strings.Contains(txs[i], "<AccptncDtTm>"); got != c.accepted {
			t.Errorf("transaction %d: AccptncDtTm %v, want %v", i+1, got, c.accepted)
		}
		if got := strings.Contains(txs[i], "<FctvIntrBkSttlmDt>"); got != c.settled {
			t.Errorf("transaction %d: FctvIntrBkSttlmDt %v, want %v", i+1, got, c.settled)
		}
		if !strings.Contains(txs[i], "<InstgAgt>") || !strings.Contains(txs[i], "<InstdAgt>") {
			t.Errorf("transaction %d lacks the agents", i+1)
		}
	}
	// A CreDtTm that is not an xs:dateTime is not echoed; the parsed time is.
	r := report(tx(1, StatusACSC, StatusReason{}))
	r.OriginalCreatedAtText = "14/03/2026"
	if x, _ := EncodeStatusReport(r); !strings.Contains(string(x), "<OrgnlCreDtTm>2026-03-14T09:26:50.000Z</OrgnlCreDtTm>") {
		t.Errorf("unusable CreDtTm text echoed:\n%s", x)
	}
}

func TestGroupStatus(t *testing.T) {
	cases := []struct {
		name string
		r    StatusReport
		want string
	}{
		{"all ACSC", report(tx(1, StatusACSC, StatusReason{}), tx(2, StatusACSC, StatusReason{})), StatusACSC},
		{"mixed", report(tx(1, StatusACSC, StatusReason{}), tx(2, StatusACSP, StatusReason{})), StatusPART},
		{"group reason", StatusReport{GroupReason: NewStatusReason(ReasonFF01, "")}, StatusRJCT},
		{"single ACWP", report(tx(1, StatusACWP, StatusReason{})), StatusACWP},
	}
	for _, c := range cases {
		if got := c.r.GroupStatus(); got != c.want {
			t.Errorf("%s: GroupStatus() = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestEncodeStatusReportRejectsBadInput(t *testing.T) {
	cases := map[string]StatusReport{
		"no msg id":           {CreatedAt: reportTime, Transactions: []TxStatus{tx(1, StatusACSC, StatusReason{})}},
		"msg id too long":     {MsgID: strings.Repeat("a", 36), CreatedAt: reportTime, Transactions: []TxStatus{tx(1, StatusACSC, StatusReason{})}},
		"no time":             {MsgID: "R", Transactions: []TxStatus{tx(1, StatusACSC, StatusReason{})}},
		"empty":               {MsgID: "R", CreatedAt: reportTime},
		"unknown status":      report(tx(1, "ACCC", StatusReason{})),
		"reject w/o reason":   report(tx(1, StatusRJCT, StatusReason{})),
		"bad reason code":     report(tx(1, StatusRJCT, StatusReason{Code: "toolong"})),
		"bad group reason cd": {MsgID: "R", CreatedAt: reportTime, GroupReason: StatusReason{Code: "ff01"}},
	}
	for name, r := range cases {
		if _, err := EncodeStatusReport(r); err == nil {
			t.Errorf("%s: EncodeStatusReport accepted it", name)
		}
		if _, err := EncodeStatusReportJSON(r); err == nil {
			t.Errorf("%s: EncodeStatusReportJSON accepted it", name)
		}
	}
}

func TestStatusReportJSONShape(t *testing.T) {
	j, err := EncodeStatusReportJSON(statusReportCases()["part_multi"])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		MsgID         string `json:"msg_id"`
		CreatedAt     string `json:"created_at"`
		OriginalMsgID string `json:"original_msg_id"`
		GroupStatus   string `json:"group_status"`
		Transactions  []struct {
			UETR         string `json:"uetr"`
			EndToEndID   string `json:"end_to_end_id"`
			Status       string `json:"status"`
			StatusReason *struct {
				Code string `json:"code"`
				Text string `json:"text"`
			} `json:"status_reason"`
		} `json:"transactions"`
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.GroupStatus != StatusPART || got.OriginalMsgID != "BANKDJ-MSG-0001" || got.CreatedAt != "2026-03-14T09:26:53.589Z" || len(got.Transactions) != 4 {
		t.Fatalf("unexpected report: %+v", got)
	}
	rj := got.Transactions[1]
	if rj.Status != StatusRJCT || rj.StatusReason == nil || rj.StatusReason.Code != ReasonAM04 || rj.StatusReason.Text != ReasonText(ReasonAM04) {
		t.Fatalf("rejected transaction: %+v", rj)
	}
	if got.Transactions[0].StatusReason != nil {
		t.Fatalf("accepted transaction carries a reason")
	}
}

func TestSplitText(t *testing.T) {
	long := strings.Repeat("abcd ", 50)
	for _, piece := range splitText(long, 105) {
		if n := len([]rune(piece)); n == 0 || n > 105 {
			t.Fatalf("piece of %d characters", n)
		}
	}
	if got := strings.Join(splitText(long, 105), ""); got != long {
		t.Fatalf("pieces do not rebuild the text")
	}
	if got := splitText(strings.Repeat("é", 230), 105); len(got) != 3 {
		t.Fatalf("unbroken text: %d pieces", len(got))
	}
}

// TestStatusReportJSONMirrorsXML checks that the JSON report carries the
// same original creation time, acceptance time, settlement date and agents
// as the XML report of the same StatusReport, and leaves them out where the
// XML does.
func TestStatusReportJSONMirrorsXML(t *testing.T) {
	type xmlTx struct {
		UETR       string `xml:"OrgnlUETR"`
		Accepted   string `xml:"AccptncDtTm"`
		Settled    string `xml:"FctvIntrBkSttlmDt>Dt"`
		Instructor string `xml:"InstgAgt>FinInstnId>BICFI"`
		Instructed string `xml:"InstdAgt>FinInstnId>BICFI"`
	}
	type xmlDoc struct {
		Created string  `xml:"FIToFIPmtStsRpt>OrgnlGrpInfAndSts>OrgnlCreDtTm"`
		Txs     []xmlTx `xml:"FIToFIPmtStsRpt>TxInfAndSts"`
	}
	type jsonDoc struct {
		Created string `json:"original_created_at"`
		Txs     []struct {
			UETR       string `json:"uetr"`
			Accepted   string `json:"accepted_at"`
			Settled    string `json:"settlement_date"`
			Instructor string `json:"instructing_agent"`
			Instructed string `json:"instructed_agent"`
		} `json:"transactions"`
	}
	cases := statusReportCases()
	sawAll := false
	for _, name := range sortedNames(cases) {
		x, err := EncodeStatusReport(cases[name])
		if err != nil {
			t.Fatal(err)
		}
		j, err := EncodeStatusReportJSON(cases[name])
		if err != nil {
			t.Fatal(err)
		}
		var xd xmlDoc
		if err := xml.Unmarshal(x, &xd); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var jd jsonDoc
		if err := json.Unmarshal(j, &jd); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if xd.Created != jd.Created {
			t.Errorf("%s: OrgnlCreDtTm %q, original_created_at %q", name, xd.Created, jd.Created)
		}
		if len(xd.Txs) != len(jd.Txs) {
			t.Fatalf("%s: %d XML transactions, %d JSON", name, len(xd.Txs), len(jd.Txs))
		}
		for i, xt := range xd.Txs {
			jt := jd.Txs[i]
			got := xmlTx{UETR: xt.UETR, Accepted: jt.Accepted, Settled: jt.Settled, Instructor: jt.Instructor, Instructed: jt.Instructed}
			if got != xt {
				t.Errorf("%s transaction %d: JSON %+v, XML %+v", name, i+1, got, xt)
			}
			if xt.Accepted != "" && xt.Settled != "" && xt.Instructor != "" && xt.Instructed != "" {
				sawAll = true
			}
		}
	}
	if !sawAll {
		t.Fatal("no case carries every field: the comparison proves nothing")
	}
	full, _ := EncodeStatusReportJSON(cases["part_accepted_settled_agents"])
	if !bytes.Contains(full, []byte(`"original_created_at": "2026-03-14T12:26:50.5+03:00"`)) {
		t.Errorf("original_created_at not echoed as received:\n%s", full)
	}
}
