package banking_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/testutil"
)

// bank is a participant bank in a test environment.
type bank struct {
	BIC, MerchantID, SK, SK2 string
}

func newBank(t *testing.T, e *apptest.Env, name, bic string, deferred bool) bank {
	t.Helper()
	c, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: name, BIC: bic, DeferredSettlement: deferred})
	if err != nil {
		t.Fatal(err)
	}
	return bank{BIC: bic, MerchantID: c.MerchantID, SK: c.SecretKeys[0], SK2: c.SecretKeys[1]}
}

// fund tops up the bank's DJF settlement account through the sandbox.
func fund(t *testing.T, e *apptest.Env, b bank, amount int64) {
	t.Helper()
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/topups", Key: b.SK, Body: map[string]any{"currency": "DJF", "amount_minor": amount}})
	if r.Status != 201 {
		t.Fatalf("top-up: %d %s", r.Status, r.Body)
	}
}

// available is the bank's DJF settlement balance.
func available(t *testing.T, e *apptest.Env, b bank) int64 {
	t.Helper()
	bal, err := ledger.AccountBalance(context.Background(), e.Main.DB, ledger.AccountRef{MerchantID: b.MerchantID, Currency: "DJF", Kind: ledger.Available})
	if err != nil {
		t.Fatal(err)
	}
	return bal
}

func verifyLedger(t *testing.T, e *apptest.Env) {
	t.Helper()
	if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}

func postXML(e *apptest.Env, key, path string, body []byte) *apptest.Response {
	return e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body, Headers: map[string]string{"Content-Type": "application/xml"}})
}

func postJSON(e *apptest.Env, key, path string, body any) *apptest.Response {
	return e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body})
}

func getTransfer(t *testing.T, e *apptest.Env, key, uetr string) transferRow {
	t.Helper()
	r := e.Do(apptest.Request{Method: "GET", Path: "/banking/v1/transfers/" + uetr, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET transfer %s: %d %s", uetr, r.Status, r.Body)
	}
	var row transferRow
	r.JSON(t, &row)
	return row
}

// transferRow is the JSON row, decoded strictly enough to compare.
type transferRow struct {
	UETR         string `json:"uetr"`
	MsgID        string `json:"msg_id"`
	EndToEndID   string `json:"end_to_end_id"`
	Status       string `json:"status"`
	StatusReason *struct {
		Code   string `json:"code"`
		Text   string `json:"text"`
		Detail string `json:"detail"`
	} `json:"status_reason"`
	AmountMinor         int64           `json:"amount_minor"`
	Currency            string          `json:"currency"`
	Debtor              json.RawMessage `json:"debtor"`
	DebtorAgent         string          `json:"debtor_agent"`
	Creditor            json.RawMessage `json:"creditor"`
	CreditorAgent       string          `json:"creditor_agent"`
	RemittanceInfo      *string         `json:"remittance_info"`
	ReturnedAmountMinor int64           `json:"returned_amount_minor"`
	Returns             []struct {
		ID          string `json:"id"`
		Type        string `json:"type"`
		AmountMinor int64  `json:"amount_minor"`
		ReasonCode  string `json:"reason_code"`
		ReasonText  string `json:"reason_text"`
		CreatedAt   string `json:"created_at"`
	} `json:"returns"`
	CreatedAt string  `json:"created_at"`
	SettledAt *string `json:"settled_at"`
}

// jsonReport is the JSON mirror of pacs.002.
type jsonReport struct {
	MsgID         string `json:"msg_id"`
	CreatedAt     string `json:"created_at"`
	OriginalMsgID string `json:"original_msg_id"`
	GroupStatus   string `json:"group_status"`
	StatusReason  *struct {
		Code string `json:"code"`
	} `json:"status_reason"`
	Transactions []struct {
		UETR         string `json:"uetr"`
		EndToEndID   string `json:"end_to_end_id"`
		Status       string `json:"status"`
		StatusReason *struct {
			Code string `json:"code"`
			Text string `json:"text"`
		} `json:"status_reason"`
	} `json:"transactions"`
}

// tx describes one JSON transaction; zero fields take valid defaults.
type tx struct {
	UETR, Debtor, Creditor, DebtorAgent, CreditorAgent, Currency string
	Amount                                                       any
	Remittance                                                   *string
}

func newUETR() string { return uuid.New().String() }

// message builds the JSON envelope of a pacs.008.
func message(msgID string, txs ...tx) map[string]any {
	var list []map[string]any
	for i, x := range txs {
		m := map[string]any{
			"uetr": x.UETR, "end_to_end_id": fmt.Sprintf("E2E-%d", i+1), "amount_minor": x.Amount, "currency": x.Currency,
			"charge_bearer": "SLEV",
			"debtor":        map[string]any{"name": x.Debtor, "account": "DJ2100010000000154000100186"}, "debtor_agent": x.DebtorAgent,
			"creditor": map[string]any{"name": x.Creditor, "account": "GB82WEST12345698765432"}, "creditor_agent": x.CreditorAgent,
		}
		if x.UETR == "" {
			m["uetr"] = newUETR()
		}
		if x.Amount == nil {
			m["amount_minor"] = 1000
		}
		if x.Currency == "" {
			m["currency"] = "DJF"
		}
		if x.Debtor == "" {
			m["debtor"].(map[string]any)["name"] = "Amina Hassan"
		}
		if x.Creditor == "" {
			m["creditor"].(map[string]any)["name"] = "Omar Farah Trading SARL"
		}
		if x.Remittance != nil {
			m["remittance_info"] = *x.Remittance
		}
		list = append(list, m)
	}
	return map[string]any{"msg_id": msgID, "created_at": "2026-03-14T09:26:50Z", "settlement": map[string]any{"method": "CLRG"}, "transactions": list}
}

func uetrOf(msg map[string]any, i int) string {
	return msg["transactions"].([]map[string]any)[i]["uetr"].(string)
}

var msgN struct {
	sync.Mutex
	n int
}

// newMsgID returns a fresh MsgId.
func newMsgID() string {
	msgN.Lock()
	defer msgN.Unlock()
	msgN.n++
	return fmt.Sprintf("MSG-%s-%d", uuid.New().String()[:8], msgN.n)
}

// submitJSON posts a JSON pacs.008 and decodes the JSON pacs.002.
func submitJSON(t *testing.T, e *apptest.Env, key string, msg any, wantHTTP int) jsonReport {
	t.Helper()
	r := postJSON(e, key, "/banking/v1/transfers", msg)
	if r.Status != wantHTTP {
		t.Fatalf("POST transfers: %d, want %d: %s", r.Status, wantHTTP, r.Body)
	}
	var rep jsonReport
	r.JSON(t, &rep)
	return rep
}

// xmlDocs collects every XML document payd emitted, by the path that
// produced it, for xmllint.
type xmlDocs struct {
	mu   sync.Mutex
	docs map[string][]byte
}

func (d *xmlDocs) add(name string, body []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.docs == nil {
		d.docs = map[string][]byte{}
	}
	d.docs[name] = append([]byte(nil), body...)
}

// lint validates every collected document against the official
// pacs.002.001.10 schema with xmllint.
func (d *xmlDocs) lint(t *testing.T) {
	t.Helper()
	lint := testutil.Tool(t, "libxml2-utils", "xmllint")
	xsd := testutil.TestData(t, "iso20022", "xsd", "pacs.002.001.10.xsd")
	dir := t.TempDir()
	args := []string{"--noout", "--schema", xsd}
	names := make([]string, 0, len(d.docs))
	for n := range d.docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		p := filepath.Join(dir, fmt.Sprintf("%03d.xml", i))
		if err := os.WriteFile(p, d.docs[n], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command(lint, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), " validates"); n != len(names) {
		t.Fatalf("xmllint validated %d of %d documents:\n%s", n, len(names), out)
	}
}

// withSanctions configures the small OFAC fixture as the sanctions list.
func withSanctions(t *testing.T) apptest.Option {
	path := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	return func(c *app.Config) { c.SanctionsList = path }
}

// requireCoverage fails unless the collected documents between them carry
// every status and reason code named (group or transaction level).
func (d *xmlDocs) requireCoverage(t *testing.T, codes ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, doc := range d.docs {
		var rep xmlReport
		if err := xml.Unmarshal(doc, &rep); err != nil {
			t.Fatal(err)
		}
		seen[rep.Rpt.Grp.GrpSts] = true
		for _, r := range rep.Rpt.Grp.Rsn {
			seen[r.Cd] = true
		}
		for _, x := range rep.Rpt.Txs {
			seen[x.Status] = true
			for _, r := range x.Rsn {
				seen[r.Cd] = true
			}
		}
	}
	for _, c := range codes {
		if !seen[c] {
			t.Errorf("no XML report with %s was emitted", c)
		}
	}
}
