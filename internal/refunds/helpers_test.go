package refunds_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// refund is the refund object as the tests read it.
type refund struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	PaymentIntent  string            `json:"payment_intent"`
	AmountMinor    int64             `json:"amount_minor"`
	Currency       string            `json:"currency"`
	Status         string            `json:"status"`
	Reason         *string           `json:"reason"`
	FailureCode    *string           `json:"failure_code"`
	FailureMessage *string           `json:"failure_message"`
	Metadata       map[string]string `json:"metadata"`
	ApprovedBy     *string           `json:"approved_by"`
	Livemode       bool              `json:"livemode"`
	SucceededAt    *string           `json:"succeeded_at"`
	FailedAt       *string           `json:"failed_at"`
}

// intent is the part of a payment intent the tests read.
type intent struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	AmountCapturedMinor int64  `json:"amount_captured_minor"`
	AmountRefundedMinor int64  `json:"amount_refunded_minor"`
	Refunded            bool   `json:"refunded"`
	NextAction          *struct {
		Type        string `json:"type"`
		RedirectURL string `json:"redirect_url"`
	} `json:"next_action"`
}

// noRedirects posts hosted page forms the way a browser does, stopping at the
// redirect back to the merchant.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

var keyN atomic.Int64

func idemKey() string { return fmt.Sprintf("rk-%d-%d", time.Now().UnixNano(), keyN.Add(1)) }

// post sends a POST with key, a fresh idempotency key and an optional scenario.
func post(e *apptest.Env, key, path string, body any, scenario string) *apptest.Response {
	e.T.Helper()
	h := map[string]string{"Idempotency-Key": idemKey()}
	if scenario != "" {
		h["X-Service-Scenario"] = scenario
	}
	return e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body, Headers: h})
}

func want(t testing.TB, r *apptest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Fatalf("answered %d %q, want %d %q: %s", r.Status, r.ErrorCode(), status, code, r.Body)
	}
}

func errParam(t testing.TB, r *apptest.Response) string {
	t.Helper()
	e, _ := r.Map(t)["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

// createRefund posts a refund and decodes the 201.
func createRefund(t testing.TB, e *apptest.Env, key string, body map[string]any, scenario string) refund {
	t.Helper()
	r := post(e, key, "/v1/refunds", body, scenario)
	want(t, r, 201, "")
	var re refund
	r.JSON(t, &re)
	return re
}

func getRefund(t testing.TB, e *apptest.Env, key, id string) refund {
	t.Helper()
	r := e.Do(apptest.Request{Method: "GET", Path: "/v1/refunds/" + id, Key: key})
	want(t, r, 200, "")
	var re refund
	r.JSON(t, &re)
	return re
}

func getIntent(t testing.TB, e *apptest.Env, key, id string) intent {
	t.Helper()
	r := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + id, Key: key})
	want(t, r, 200, "")
	var in intent
	r.JSON(t, &in)
	return in
}

// bankPayment makes a succeeded bank_a payment (OTP flow) of amount DJF.
func bankPayment(t testing.TB, e *apptest.Env, key string, amount int64) string {
	t.Helper()
	r := post(e, key, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a",
		"customer_msisdn": "77123456"}, "")
	want(t, r, 201, "")
	var in intent
	r.JSON(t, &in)
	c := post(e, key, "/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": "123456"}, "")
	want(t, c, 200, "")
	if got := getIntent(t, e, key, in.ID); got.Status != "succeeded" || got.AmountCapturedMinor != amount {
		t.Fatalf("bank payment %s: %+v", in.ID, got)
	}
	return in.ID
}

// walletPayment makes a succeeded wallet_c payment (OTP auth mode).
func walletPayment(t testing.TB, e *apptest.Env, amount int64) string {
	t.Helper()
	r := post(e, e.SK, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "wallet_c",
		"customer_msisdn": "+25377000009", "metadata": map[string]string{"auth_mode": "OTP"}}, "")
	want(t, r, 201, "")
	var in intent
	r.JSON(t, &in)
	want(t, post(e, e.SK, "/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": "123456"}, ""), 200, "")
	return in.ID
}

// cardPayment makes a succeeded hosted card payment (wallet_a card page).
func cardPayment(t testing.TB, e *apptest.Env, amount int64) string {
	t.Helper()
	r := post(e, e.SK, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "USD", "provider": "wallet_a",
		"return_url": "http://merchant.example/return", "metadata": map[string]string{"wallet_a_mode": "card"}}, "")
	want(t, r, 201, "")
	var in intent
	r.JSON(t, &in)
	resp, err := noRedirects.PostForm(in.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"},
		"exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := getIntent(t, e, e.SK, in.ID); got.Status != "succeeded" {
		t.Fatalf("card payment %s is %s", in.ID, got.Status)
	}
	return in.ID
}

// cardPresentPayment records an approved card-present payment, as a terminal does.
func cardPresentPayment(t testing.TB, e *apptest.Env, amount int64) string {
	t.Helper()
	pr := auth.Principal{ID: "key_terminal", MerchantID: e.Merchant.MerchantID, Kind: "secret"}
	in, err := e.Main.PaymentIntents().RecordCardPresent(context.Background(), store.NoClaim, pr, payments.CardPresent{AmountMinor: amount,
		Currency: "DJF", TerminalID: "term_test", OutletID: "out_1", Brand: "visa", Last4: "4242", EntryMode: "chip",
		Approved: true, AuthCode: "A1B2C3", IdempotencyKey: idemKey()})
	if err != nil || in.Status != payments.Succeeded {
		t.Fatalf("card-present payment: %v %+v", err, in)
	}
	return in.ID
}

// balance reads one of the merchant's test-mode accounts through the ledger.
func balance(t testing.TB, e *apptest.Env, merchantID, currency string, kind ledger.AccountKind) int64 {
	t.Helper()
	return balanceIn(t, e, false, merchantID, currency, kind)
}

// balanceIn reads one of the merchant's accounts in a mode.
func balanceIn(t testing.TB, e *apptest.Env, livemode bool, merchantID, currency string, kind ledger.AccountKind) int64 {
	t.Helper()
	b, err := ledger.AccountBalance(context.Background(), e.Main.DB, ledger.AccountRef{MerchantID: merchantID, Livemode: livemode,
		Currency: currency, Kind: kind})
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

// ledgerKinds lists the kinds of the ledger transactions referencing id, oldest first.
func ledgerKinds(t testing.TB, e *apptest.Env, id string) []string {
	t.Helper()
	rows, err := e.Main.DB.Query(context.Background(), "SELECT kind FROM ledger_transactions WHERE reference = ? ORDER BY id", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
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

func count(t testing.TB, e *apptest.Env, query string, args ...any) int {
	t.Helper()
	return storetest.Count(t, e.Main.DB, query, args...)
}

// waitRefund polls a refund until it leaves pending.
func waitRefund(t testing.TB, e *apptest.Env, id string) refund {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		re := getRefund(t, e, e.SK, id)
		if re.Status != "pending" {
			return re
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund %s still pending after 20s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
