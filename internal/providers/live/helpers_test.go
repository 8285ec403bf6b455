package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// liveConfig: reconciliation every 100 ms, breakers open for 400 ms, and the
// small sanctions fixture list, since live payouts are refused unscreened.
func liveConfig(t testing.TB) apptest.Option {
	list := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	return func(c *app.Config) {
		c.ReconcileInterval = 100 * time.Millisecond
		c.BreakerOpen = 400 * time.Millisecond
		c.SandboxTimeoutDelay = 100 * time.Millisecond
		c.SanctionsList = list
	}
}

// merchant is a merchant gone live against a simulator.
type merchant struct {
	e       *apptest.Env
	id      string
	key     string // live secret key
	secrets []string
	n       atomic.Int64
}

var merchantSeq atomic.Int64

// goLive makes a merchant with approved KYC, connects provs to s with the
// given call timeout, and makes a live secret key.
func goLive(t *testing.T, e *apptest.Env, s *apptest.Sim, timeout string, provs ...string) *merchant {
	t.Helper()
	ctx := context.Background()
	c, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: fmt.Sprintf("Live %d", merchantSeq.Add(1))})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Main.Merchants.SetKYC(ctx, c.MerchantID, "approved"); err != nil {
		t.Fatal(err)
	}
	m := &merchant{e: e, id: c.MerchantID}
	for _, p := range provs {
		cfg := merchants.ProviderConfig{BaseURL: s.URL + "/" + p, APIKey: "prov_key_" + p + "_" + c.MerchantID,
			CallbackSecret: "prov_cbsec_" + p + "_" + c.MerchantID, Timeout: timeout}
		if err := e.Main.Merchants.ConnectProvider(ctx, c.MerchantID, p, cfg); err != nil {
			t.Fatal(err)
		}
		m.secrets = append(m.secrets, cfg.APIKey, cfg.CallbackSecret)
	}
	k, err := e.Main.Merchants.CreateKey(ctx, c.MerchantID, true, auth.KindSecret)
	if err != nil {
		t.Fatal(err)
	}
	m.key = k.Secret
	return m
}

// post sends a POST with the live key and a fresh idempotency key.
func (m *merchant) post(path string, body any, headers ...string) *apptest.Response {
	m.e.T.Helper()
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("%s-%d", m.id, m.n.Add(1))}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	return m.e.Do(apptest.Request{Method: "POST", Path: path, Key: m.key, Body: body, Headers: h})
}

func (m *merchant) get(path string) *apptest.Response {
	m.e.T.Helper()
	return m.e.Do(apptest.Request{Method: "GET", Path: path, Key: m.key})
}

// intent is what the tests read of a payment intent.
type intent struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	AmountMinor         int64  `json:"amount_minor"`
	AmountCapturedMinor int64  `json:"amount_captured_minor"`
	Livemode            bool   `json:"livemode"`
	NextAction          *struct {
		Type        string `json:"type"`
		OTPLength   int    `json:"otp_length"`
		RedirectURL string `json:"redirect_url"`
	} `json:"next_action"`
	LastError *struct {
		Code        string `json:"code"`
		Provider    string `json:"provider"`
		DeclineCode string `json:"decline_code"`
	} `json:"last_error"`
	PaymentMethodDetails json.RawMessage `json:"payment_method_details"`
}

func decode(t testing.TB, r *apptest.Response, want int) intent {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	var in intent
	r.JSON(t, &in)
	return in
}

func (m *merchant) create(t testing.TB, body map[string]any, want int, headers ...string) intent {
	t.Helper()
	return decode(t, m.post("/v1/payment_intents", body, headers...), want)
}

func (m *merchant) intent(t testing.TB, id string) intent {
	t.Helper()
	return decode(t, m.get("/v1/payment_intents/"+id), 200)
}

// settle polls an intent until it is neither requires_action nor
// processing (callbacks and reconciliation are asynchronous).
func (m *merchant) settle(t testing.TB, id string) intent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		in := m.intent(t, id)
		if in.Status != "requires_action" && in.Status != "processing" || time.Now().After(deadline) {
			return in
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// available is the merchant's live available balance in currency.
func (m *merchant) available(t testing.TB, currency string) int64 {
	t.Helper()
	var b struct {
		Balances []struct {
			Currency  string `json:"currency"`
			Available int64  `json:"available"`
		} `json:"balances"`
	}
	r := m.get("/v1/balance")
	r.JSON(t, &b)
	for _, x := range b.Balances {
		if x.Currency == currency {
			return x.Available
		}
	}
	return 0
}

// count runs a COUNT(*) query.
func count(t testing.TB, e *apptest.Env, q string, args ...any) int {
	t.Helper()
	return storetest.Count(t, e.Main.DB, q, args...)
}

// paidByCallback checks that an intent a create already answered
// succeeded was moved there by the provider's callback (the push approved
// before the create answered), not at initiation: the callback's row
// appears within a few seconds (it is remembered just after it is applied).
func paidByCallback(t testing.TB, e *apptest.Env, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for count(t, e, "SELECT COUNT(*) FROM provider_callbacks WHERE object_id = ?", id) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s answered succeeded by its create, but no provider callback paid it", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settledOnce checks an intent was credited and announced exactly once.
func settledOnce(t testing.TB, e *apptest.Env, id string) {
	t.Helper()
	if n := count(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ? AND kind = 'payment_succeeded'", id); n != 1 {
		t.Errorf("%s: %d ledger credits", id, n)
	}
	if n := count(t, e, "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'payment_intent.succeeded'", id); n != 1 {
		t.Errorf("%s: %d payment_intent.succeeded events", id, n)
	}
}

// submitPage posts a form to a provider page (following nothing) and
// returns where it leads.
func submitPage(t testing.TB, pageURL string, form url.Values) string {
	t.Helper()
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	form.Set("t", u.Query().Get("t"))
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(u.Scheme+"://"+u.Host+u.Path, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("page submit: %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// requireNoSecrets fails if a secret is in the logs or any given body.
func (m *merchant) requireNoSecrets(t testing.TB, bodies ...[]byte) {
	t.Helper()
	m.e.RequireSecretsAbsent(m.secrets...)
	for _, b := range bodies {
		for _, s := range m.secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("a provider secret (%.12s…) is in a response", s)
			}
		}
	}
}
