package disputes_test

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

// dispute is the dispute object as the tests read it.
type dispute struct {
	ID            string             `json:"id"`
	Object        string             `json:"object"`
	PaymentIntent string             `json:"payment_intent"`
	AmountMinor   int64              `json:"amount_minor"`
	Currency      string             `json:"currency"`
	Reason        string             `json:"reason"`
	Status        string             `json:"status"`
	Evidence      map[string]*string `json:"evidence"`
	EvidenceDueBy time.Time          `json:"evidence_due_by"`
	Metadata      map[string]string  `json:"metadata"`
	Livemode      bool               `json:"livemode"`
	CreatedAt     time.Time          `json:"created_at"`
	ClosedAt      *time.Time         `json:"closed_at"`
}

type intent struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	AmountCapturedMinor int64  `json:"amount_captured_minor"`
	Disputed            bool   `json:"disputed"`
	Refunded            bool   `json:"refunded"`
	NextAction          *struct {
		RedirectURL string `json:"redirect_url"`
	} `json:"next_action"`
}

var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

var keyN atomic.Int64

func idemKey() string { return fmt.Sprintf("dk-%d-%d", time.Now().UnixNano(), keyN.Add(1)) }

func post(e *apptest.Env, key, path string, body any) *apptest.Response {
	e.T.Helper()
	return e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body, Headers: map[string]string{"Idempotency-Key": idemKey()}})
}

func get(e *apptest.Env, key, path string) *apptest.Response {
	e.T.Helper()
	return e.Do(apptest.Request{Method: "GET", Path: path, Key: key})
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

func decode[T any](t testing.TB, r *apptest.Response) T {
	t.Helper()
	var v T
	r.JSON(t, &v)
	return v
}

func getDispute(t testing.TB, e *apptest.Env, key, id string) dispute {
	t.Helper()
	r := get(e, key, "/v1/disputes/"+id)
	want(t, r, 200, "")
	return decode[dispute](t, r)
}

func getIntent(t testing.TB, e *apptest.Env, key, id string) intent {
	t.Helper()
	r := get(e, key, "/v1/payment_intents/"+id)
	want(t, r, 200, "")
	return decode[intent](t, r)
}

// sandboxDispute disputes pi through the sandbox route and decodes the 201.
func sandboxDispute(t testing.TB, e *apptest.Env, pi, reason string) dispute {
	t.Helper()
	body := map[string]any{"payment_intent": pi}
	if reason != "" {
		body["reason"] = reason
	}
	r := post(e, e.SK, "/v1/sandbox/disputes", body)
	want(t, r, 201, "")
	return decode[dispute](t, r)
}

// cardPayment makes a succeeded hosted card payment (wallet_a card page)
// with the given test card.
func cardPayment(t testing.TB, e *apptest.Env, amount int64, number string) string {
	t.Helper()
	r := post(e, e.SK, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "USD", "provider": "wallet_a",
		"return_url": "http://merchant.example/return", "metadata": map[string]string{"wallet_a_mode": "card"}})
	want(t, r, 201, "")
	in := decode[intent](t, r)
	resp, err := noRedirects.PostForm(in.NextAction.RedirectURL, url.Values{"card_number": {number},
		"exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Not "and not disputed yet": the sandbox's dispute card is disputed
	// PAYD_SANDBOX_PUSH_DELAY after paying, which a loaded machine can
	// reach before this read.
	if got := getIntent(t, e, e.SK, in.ID); got.Status != "succeeded" {
		t.Fatalf("card payment %s: %+v", in.ID, got)
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

// bankPayment makes a succeeded bank_a payment (not a card).
func bankPayment(t testing.TB, e *apptest.Env, amount int64) string {
	t.Helper()
	r := post(e, e.SK, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a",
		"customer_msisdn": "77123456"})
	want(t, r, 201, "")
	in := decode[intent](t, r)
	want(t, post(e, e.SK, "/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": "123456"}), 200, "")
	return in.ID
}

func available(t testing.TB, e *apptest.Env, livemode bool, currency string) int64 {
	t.Helper()
	b, err := ledger.AccountBalance(context.Background(), e.Main.DB, ledger.AccountRef{MerchantID: e.Merchant.MerchantID,
		Livemode: livemode, Currency: currency, Kind: ledger.Available})
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

func count(t testing.TB, e *apptest.Env, query string, args ...any) int {
	t.Helper()
	return storetest.Count(t, e.Main.DB, query, args...)
}

// waitStatus polls a dispute until its status is not from.
func waitStatus(t testing.TB, e *apptest.Env, key, id, from string) dispute {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d := getDispute(t, e, key, id)
		if d.Status != from {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("dispute %s still %s after 20s", id, from)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// disputeOf polls the list for the dispute of an intent.
func disputeOf(t testing.TB, e *apptest.Env, key, pi string) dispute {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := get(e, key, "/v1/disputes?payment_intent="+pi)
		want(t, r, 200, "")
		l := decode[struct {
			Data []dispute `json:"data"`
		}](t, r)
		if len(l.Data) == 1 {
			return l.Data[0]
		}
		if len(l.Data) > 1 {
			t.Fatalf("intent %s has %d disputes", pi, len(l.Data))
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s not disputed after 20s", pi)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
