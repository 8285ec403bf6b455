package payments_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
)

// intent is the part of a PaymentIntent the tests read.
type intent struct {
	ID                  string            `json:"id"`
	Status              string            `json:"status"`
	AmountMinor         int64             `json:"amount_minor"`
	AmountCapturedMinor int64             `json:"amount_captured_minor"`
	Currency            string            `json:"currency"`
	Provider            string            `json:"provider"`
	CustomerMSISDN      *string           `json:"customer_msisdn"`
	Metadata            map[string]string `json:"metadata"`
	NextAction          *struct {
		Type        string `json:"type"`
		OTPLength   int    `json:"otp_length"`
		RedirectURL string `json:"redirect_url"`
	} `json:"next_action"`
	LastError *struct {
		Code        string `json:"code"`
		Message     string `json:"message"`
		Provider    string `json:"provider"`
		DeclineCode string `json:"decline_code"`
	} `json:"last_error"`
	PaymentMethodDetails json.RawMessage `json:"payment_method_details"`
	SucceededAt          *string         `json:"succeeded_at"`
	CanceledAt           *string         `json:"canceled_at"`
}

func decode(t testing.TB, r *apptest.Response) intent {
	t.Helper()
	var in intent
	r.JSON(t, &in)
	return in
}

// create posts a new intent with an optional scenario header.
func create(e *apptest.Env, body map[string]any, scenario string) *apptest.Response {
	e.T.Helper()
	h := map[string]string{"Idempotency-Key": "k-" + time.Now().Format("150405.000000000")}
	if scenario != "" {
		h["X-Service-Scenario"] = scenario
	}
	return e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Body: body, Headers: h})
}

func confirm(e *apptest.Env, id, otp string) *apptest.Response {
	e.T.Helper()
	return e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + id + "/confirm", Key: e.SK, Body: map[string]string{"otp": otp}})
}

func get(t testing.TB, e *apptest.Env, id string) intent {
	t.Helper()
	r := e.Get("/v1/payment_intents/" + id)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", id, r.Status, r.Body)
	}
	return decode(t, r)
}

// noRedirects is a client that stops at the first answer, as a test of the
// hosted pages must see the 303 itself.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

// submitPage posts a hosted page form the way a browser does and returns
// the status, the Location header and the body.
func submitPage(t testing.TB, pageURL string, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := noRedirects.PostForm(pageURL, form)
	if err != nil {
		t.Fatalf("POST %s: %v", pageURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// withoutPageIDs is a page's body without the random parts of its address
// (the intent's id and the page token), which a short secret such as a
// three-digit PIN can appear in by chance: what is left is what the page
// could echo of a submitted form.
func withoutPageIDs(body, pageURL string) string {
	u, err := url.Parse(pageURL)
	if err != nil {
		return body
	}
	for _, s := range []string{u.Query().Get("t"), path.Base(u.Path)} {
		if s != "" {
			body = strings.ReplaceAll(body, s, "")
			body = strings.ReplaceAll(body, url.QueryEscape(s), "")
		}
	}
	return body
}

func getPage(t testing.TB, pageURL string) (int, string) {
	t.Helper()
	resp, err := noRedirects.Get(pageURL)
	if err != nil {
		t.Fatalf("GET %s: %v", pageURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitStatus polls the intent until it leaves requires_action or the
// deadline passes (push approvals arrive after the configured delay).
func waitStatus(t testing.TB, e *apptest.Env, id string) intent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		in := get(t, e, id)
		if in.Status != "requires_action" && in.Status != "processing" {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s still %s after 20s", id, in.Status)
		}
		time.Sleep(15 * time.Millisecond)
	}
}

func eventTypes(t testing.TB, e *apptest.Env, id string) []string {
	t.Helper()
	evs, err := events.ForObject(context.Background(), e.Main.DB, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func available(t testing.TB, e *apptest.Env, currency string) int64 {
	t.Helper()
	b, err := ledger.AccountBalance(context.Background(), e.Main.DB, ledger.AccountRef{MerchantID: e.Merchant.MerchantID,
		Currency: currency, Kind: ledger.Available})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func verifyLedger(t testing.TB, e *apptest.Env) {
	t.Helper()
	if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}

func count(t testing.TB, e *apptest.Env, table string) int {
	t.Helper()
	return storetest.Count(t, e.Main.DB, "SELECT COUNT(*) FROM "+table)
}

func errorParam(r *apptest.Response) string {
	var b struct {
		Error struct {
			Param string `json:"param"`
		} `json:"error"`
	}
	json.Unmarshal(r.Body, &b)
	return b.Error.Param
}

func errorField(t testing.TB, r *apptest.Response, field string) any {
	t.Helper()
	m := r.Map(t)
	e, _ := m["error"].(map[string]any)
	return e[field]
}

func joined(s []string) string { return strings.Join(s, ",") }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func merchantParams(name string) merchants.CreateParams { return merchants.CreateParams{Name: name} }

// creditedTo sums what the ledger moved into available for one object.
func creditedTo(t testing.TB, e *apptest.Env, reference string) int64 {
	t.Helper()
	var n int64
	err := e.Main.DB.QueryRow(context.Background(), `SELECT COALESCE(SUM(le.amount), 0) FROM ledger_entries le
		JOIN ledger_transactions lt ON lt.id = le.transaction_id JOIN ledger_accounts la ON la.id = le.account_id
		WHERE lt.reference = ? AND la.kind = 'available'`, reference).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
