package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

const (
	apiKey = "sk_sim_test_0123456789"
	secret = "cbsec_0123456789abcdef"
)

// receiver is a merchant's callback endpoint that records what it gets.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []protocol.Event
	bad    int
	got    chan protocol.Event
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{got: make(chan protocol.Event, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get(protocol.HeaderEventID)
		if err := protocol.Verify(r.Header.Get(protocol.HeaderSignature), secret, id, body, time.Now()); err != nil {
			rc.mu.Lock()
			rc.bad++
			rc.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev protocol.Event
		json.Unmarshal(body, &ev)
		if ev.ID != id || r.Header.Get(protocol.HeaderEventType) != ev.Type {
			t.Errorf("callback headers %s/%s do not match the body %s/%s", id, r.Header.Get(protocol.HeaderEventType), ev.ID, ev.Type)
		}
		rc.mu.Lock()
		rc.events = append(rc.events, ev)
		rc.mu.Unlock()
		rc.got <- ev
	}))
	t.Cleanup(rc.Close)
	return rc
}

// wait returns the next callback, failing after a generous bound.
func (rc *receiver) wait(t *testing.T) protocol.Event {
	t.Helper()
	select {
	case ev := <-rc.got:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no callback arrived")
	}
	return protocol.Event{}
}

type harness struct {
	t    *testing.T
	srv  *sim.Server
	rc   *receiver
	logs *bytes.Buffer
	n    int
}

func start(t *testing.T, cfg sim.Config) *harness {
	t.Helper()
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.PushDelay == 0 {
		cfg.PushDelay = 20 * time.Millisecond
	}
	srv, err := sim.Serve("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	h := &harness{t: t, srv: srv, rc: newReceiver(t), logs: logs}
	for _, rail := range []string{"bank_a", "bank_b", "wallet_a", "wallet_b", "wallet_c", "wallet_d"} {
		if r := h.call("PUT", "/"+rail+"/v1/callback_secret", "reg-"+rail, map[string]string{"secret": secret}); r.status != 200 {
			t.Fatalf("register secret on %s: %d %s", rail, r.status, r.body)
		}
	}
	return h
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) payment(t *testing.T) protocol.Payment {
	t.Helper()
	var p protocol.Payment
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return p
}

func (r reply) code() string {
	var e protocol.ErrorBody
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// call makes an API call with the API key and, when key is not empty, an
// Idempotency-Key.
func (h *harness) call(method, path, key string, body any) reply {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, h.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	if key != "" {
		req.Header.Set(protocol.HeaderIdempotencyKey, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, raw}
}

func (h *harness) initiate(rail string, req protocol.PaymentRequest) reply {
	h.t.Helper()
	h.n++
	if req.Reference == "" {
		req.Reference = "pi_test_" + time.Now().Format("150405.000000") + "_" + strings.Repeat("x", h.n%7) + string(rune('a'+h.n%26))
	}
	if req.CallbackURL == "" {
		req.CallbackURL = h.rc.URL + "/providers/" + rail + "/callbacks"
	}
	if req.AmountMinor == 0 {
		req.AmountMinor = 500
	}
	if req.Currency == "" {
		req.Currency = "DJF"
	}
	return h.call("POST", "/"+rail+"/v1/payments", req.Reference+":initiate", req)
}

func (h *harness) otp(msisdn string) string {
	h.t.Helper()
	resp, err := http.Get(h.srv.URL + "/_sim/otp?msisdn=" + url.QueryEscape(msisdn))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ MSISDN, OTP string }
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 || len(out.OTP) != 6 {
		h.t.Fatalf("otp for %s: %d %+v", msisdn, resp.StatusCode, out)
	}
	return out.OTP
}

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func submit(t *testing.T, pageURL string, form url.Values) *http.Response {
	t.Helper()
	u, _ := url.Parse(pageURL)
	form.Set("t", u.Query().Get("t"))
	resp, err := noFollow.PostForm(u.Scheme+"://"+u.Host+u.Path, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestHealthz(t *testing.T) {
	h := start(t, sim.Config{})
	resp, err := http.Get(h.srv.URL + "/_sim/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
}

func TestBankAOTP(t *testing.T) {
	h := start(t, sim.Config{})
	if r := h.initiate("bank_a", protocol.PaymentRequest{Mode: "otp", MSISDN: "+25377123456"}); r.status != 400 || r.code() != "invalid_msisdn" {
		t.Fatalf("E.164 to bank_a: %d %s", r.status, r.body)
	}
	r := h.initiate("bank_a", protocol.PaymentRequest{Mode: "otp", MSISDN: "77123456"})
	p := r.payment(t)
	if r.status != 201 || p.Status != "pending" || p.Action == nil || p.Action.Type != "otp" || p.Action.OTPLength != 6 {
		t.Fatalf("initiate: %d %s", r.status, r.body)
	}
	// The code is found by the E.164 form and by the bare local form.
	code := h.otp("+25377123456")
	if h.otp("77123456") != code {
		t.Fatal("the two forms of the number give different codes")
	}
	// An unencoded + arrives as a space.
	resp, _ := http.Get(h.srv.URL + "/_sim/otp?msisdn=+25377123456")
	var got map[string]string
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if got["otp"] != code || got["msisdn"] != "+25377123456" {
		t.Fatalf("unencoded +: %v", got)
	}
	c := h.call("POST", "/bank_a/v1/payments/"+p.ID+"/otp", p.Reference+":otp", map[string]string{"otp": code})
	if done := c.payment(t); c.status != 200 || done.Status != "succeeded" || done.CapturedMinor != 500 {
		t.Fatalf("confirm: %d %s", c.status, c.body)
	}
	ev := h.rc.wait(t)
	if ev.Type != protocol.EventPaymentSucceeded || ev.Data.Payment == nil || ev.Data.Payment.Reference != p.Reference {
		t.Fatalf("callback: %+v", ev)
	}
	// The same confirm again is replayed; another key is 409.
	again := h.call("POST", "/bank_a/v1/payments/"+p.ID+"/otp", p.Reference+":otp", map[string]string{"otp": code})
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %v", again.status, again.header)
	}
	if r := h.call("POST", "/bank_a/v1/payments/"+p.ID+"/otp", "other", map[string]string{"otp": code}); r.status != 409 || r.code() != "invalid_state" {
		t.Fatalf("second confirm: %d %s", r.status, r.body)
	}
	if strings.Contains(h.logs.String(), code) || strings.Contains(h.logs.String(), apiKey) || strings.Contains(h.logs.String(), secret) {
		t.Fatal("a code, the API key or the callback secret was logged")
	}
}

func TestWrongOTPIsTheOnlyAttempt(t *testing.T) {
	h := start(t, sim.Config{})
	p := h.initiate("bank_b", protocol.PaymentRequest{Mode: "otp", Account: "+25377000111"}).payment(t)
	code := h.otp("+25377000111")
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := h.call("POST", "/bank_b/v1/payments/"+p.ID+"/otp", "k1", map[string]string{"otp": wrong})
	if f := r.payment(t); f.Status != "failed" || f.Failure == nil || f.Failure.Code != "otp_invalid" {
		t.Fatalf("wrong code: %s", r.body)
	}
	if r := h.call("POST", "/bank_b/v1/payments/"+p.ID+"/otp", "k2", map[string]string{"otp": code}); r.status != 409 {
		t.Fatalf("right code after a wrong one: %d %s", r.status, r.body)
	}
	if ev := h.rc.wait(t); ev.Type != protocol.EventPaymentFailed {
		t.Fatalf("callback %s", ev.Type)
	}
}

func TestIdempotency(t *testing.T) {
	h := start(t, sim.Config{})
	req := protocol.PaymentRequest{Reference: "pi_idem", Mode: "push", MSISDN: "+25377555555", AmountMinor: 700, Currency: "DJF",
		CallbackURL: h.rc.URL}
	first := h.call("POST", "/wallet_c/v1/payments", "key-1", req)
	second := h.call("POST", "/wallet_c/v1/payments", "key-1", req)
	if first.status != 201 || second.status != 201 || !bytes.Equal(first.body, second.body) || second.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %d\n%s\n%s", first.status, second.status, first.body, second.body)
	}
	req.AmountMinor = 800
	if r := h.call("POST", "/wallet_c/v1/payments", "key-1", req); r.status != 422 || r.code() != "idempotency_key_reused" {
		t.Fatalf("same key, other body: %d %s", r.status, r.body)
	}
	if r := h.call("POST", "/wallet_c/v1/payments", "key-2", req); r.status != 409 || r.code() != "duplicate_reference" {
		t.Fatalf("same reference, other key: %d %s", r.status, r.body)
	}
	if r := h.call("POST", "/wallet_c/v1/payments", "", req); r.status != 400 || r.code() != "idempotency_key_required" {
		t.Fatalf("no key: %d %s", r.status, r.body)
	}
	// Push: approved after the push delay, with a callback.
	if ev := h.rc.wait(t); ev.Type != protocol.EventPaymentSucceeded || ev.Data.Payment.Reference != "pi_idem" {
		t.Fatalf("push callback: %+v", ev)
	}
	st := h.call("GET", "/wallet_c/v1/payments?reference=pi_idem", "", nil).payment(t)
	if st.Status != "succeeded" || st.CapturedMinor != 700 {
		t.Fatalf("status: %+v", st)
	}
	if r := h.call("GET", "/wallet_c/v1/payments?reference=nope", "", nil); r.status != 404 || r.code() != "payment_not_found" {
		t.Fatalf("unknown reference: %d %s", r.status, r.body)
	}
	// Another API key is another account.
	req2, _ := http.NewRequest("GET", h.srv.URL+"/wallet_c/v1/payments?reference=pi_idem", nil)
	req2.Header.Set("Authorization", "Bearer someone-else")
	resp, _ := http.DefaultClient.Do(req2)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("another account sees the payment: %d", resp.StatusCode)
	}
	req3, _ := http.NewRequest("GET", h.srv.URL+"/wallet_c/v1/payments?reference=pi_idem", nil)
	resp, _ = http.DefaultClient.Do(req3)
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("no API key: %d", resp.StatusCode)
	}
}

func TestHostedPages(t *testing.T) {
	h := start(t, sim.Config{})
	ret := "https://merchant.example/return?payment_intent=pi_x"
	cases := []struct {
		name, rail, mode string
		steps            []url.Values
		status, code     string
		method           string
	}{
		{"wallet_a phone and PIN", "wallet_a", "hpp", []url.Values{{"phone": {"+25377123456"}, "pin": {"1234"}}}, "succeeded", "", ""},
		{"card", "wallet_a", "card", []url.Values{{"card_number": {"4242 4242 4242 4242"}, "exp_month": {"12"}, "exp_year": {"2099"}, "cvc": {"123"}}}, "succeeded", "", ""},
		{"card declined", "wallet_a", "card", []url.Values{{"card_number": {"4000000000000002"}, "exp_month": {"12"}, "exp_year": {"99"}, "cvc": {"123"}}}, "failed", "card_declined", ""},
		{"card 3-D Secure completed", "wallet_a", "card", []url.Values{{"card_number": {"4000000000003220"}, "exp_month": {"1"}, "exp_year": {"2099"}, "cvc": {"123"}}, {"outcome": {"complete"}}}, "succeeded", "", ""},
		{"card 3-D Secure failed", "wallet_a", "card", []url.Values{{"card_number": {"4000000000003220"}, "exp_month": {"1"}, "exp_year": {"2099"}, "cvc": {"123"}}, {"outcome": {"fail"}}}, "failed", "authentication_failed", ""},
		{"wallet_d method picker", "wallet_d", "redirect", []url.Values{{"method": {"mpesa"}}}, "succeeded", "", "mpesa"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := "DJF"
			if c.rail == "wallet_d" {
				cur = "ETB"
			}
			r := h.initiate(c.rail, protocol.PaymentRequest{Mode: c.mode, ReturnURL: ret, Currency: cur})
			p := r.payment(t)
			if r.status != 201 || p.Action == nil || p.Action.Type != "redirect" || !strings.HasPrefix(p.Action.URL, h.srv.URL+"/"+c.rail+"/pay/") {
				t.Fatalf("initiate: %d %s", r.status, r.body)
			}
			page, _ := http.Get(p.Action.URL)
			html, _ := io.ReadAll(page.Body)
			page.Body.Close()
			if page.StatusCode != 200 {
				t.Fatalf("page: %d", page.StatusCode)
			}
			for field := range c.steps[0] {
				if !strings.Contains(string(html), `name="`+field+`"`) {
					t.Fatalf("page has no field %s:\n%s", field, html)
				}
			}
			var resp *http.Response
			for i, form := range c.steps {
				resp = submit(t, p.Action.URL, form)
				if resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("step %d: %d", i, resp.StatusCode)
				}
				if i < len(c.steps)-1 && !strings.Contains(resp.Header.Get("Location"), "/pay/"+p.ID) {
					t.Fatalf("step %d leads to %s", i, resp.Header.Get("Location"))
				}
			}
			if loc := resp.Header.Get("Location"); loc != ret {
				t.Fatalf("back to %q, want the return_url", loc)
			}
			st := h.call("GET", "/"+c.rail+"/v1/payments/"+p.ID, "", nil).payment(t)
			if st.Status != c.status || (c.code != "" && (st.Failure == nil || st.Failure.Code != c.code)) {
				t.Fatalf("status %+v failure %+v", st.Status, st.Failure)
			}
			if c.rail == "wallet_a" && c.mode == "card" && (st.MethodDetails == nil || st.MethodDetails.Last4 == "" || st.MethodDetails.Brand != "visa") {
				t.Fatalf("card details %+v", st.MethodDetails)
			}
			if c.method != "" && st.MethodDetails.Method != c.method {
				t.Fatalf("method %+v", st.MethodDetails)
			}
			if ev := h.rc.wait(t); ev.Data.Payment.ID != p.ID || ev.Data.Payment.Status != c.status {
				t.Fatalf("callback %+v", ev)
			}
		})
	}
	t.Run("wrong token", func(t *testing.T) {
		p := h.initiate("wallet_a", protocol.PaymentRequest{Mode: "hpp", ReturnURL: ret}).payment(t)
		bad := strings.Split(p.Action.URL, "?")[0] + "?t=nope"
		resp, _ := http.Get(bad)
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("wrong token: %d", resp.StatusCode)
		}
		// A bad form is shown again with a message, and changes nothing.
		r := submit(t, p.Action.URL, url.Values{"phone": {"+25377123456"}, "pin": {"12"}})
		if r.StatusCode != 400 {
			t.Fatalf("short PIN: %d", r.StatusCode)
		}
	})
	if strings.Contains(h.logs.String(), "4242") {
		t.Fatal("a card number was logged")
	}
}

func TestDirectAndPush(t *testing.T) {
	h := start(t, sim.Config{})
	p := h.initiate("wallet_d", protocol.PaymentRequest{Mode: "direct", Method: "telebirr", MSISDN: "+251911000111", Currency: "ETB"}).payment(t)
	if p.Action == nil || p.Action.Type != "push" {
		t.Fatalf("telebirr: %+v", p.Action)
	}
	if ev := h.rc.wait(t); ev.Data.Payment.ID != p.ID || ev.Data.Payment.MethodDetails.Method != "telebirr" {
		t.Fatalf("telebirr callback %+v", ev.Data.Payment)
	}
	q := h.initiate("wallet_d", protocol.PaymentRequest{Mode: "direct", Method: "amole", MSISDN: "+251911000222", Currency: "ETB"}).payment(t)
	if q.Action == nil || q.Action.Type != "otp" {
		t.Fatalf("amole: %+v", q.Action)
	}
	code := h.otp("+251911000222")
	if r := h.call("POST", "/wallet_d/v1/payments/"+q.Reference+"/otp", "c", map[string]string{"otp": code}); r.payment(t).Status != "succeeded" {
		t.Fatalf("amole confirm by reference: %s", r.body)
	}
	if r := h.initiate("wallet_d", protocol.PaymentRequest{Mode: "direct", Method: "cash", MSISDN: "+251911000222", Currency: "ETB"}); r.status != 400 || r.code() != "parameter_invalid" {
		t.Fatalf("unknown method: %d %s", r.status, r.body)
	}
	if r := h.initiate("wallet_d", protocol.PaymentRequest{Mode: "redirect", ReturnURL: "https://x.example", Currency: "DJF"}); r.status != 400 || r.code() != "currency_not_supported" {
		t.Fatalf("wallet_d in DJF: %d %s", r.status, r.body)
	}
	if r := h.initiate("wallet_b", protocol.PaymentRequest{Mode: "push", MSISDN: "+25377123456"}); r.status != 404 {
		t.Fatalf("payment on wallet_b: %d %s", r.status, r.body)
	}
	f := h.initiate("wallet_c", protocol.PaymentRequest{Mode: "push", MSISDN: "+25377110000"})
	if p := f.payment(t); p.Status != "failed" || p.Failure.Code != "insufficient_funds" {
		t.Fatalf("refused number: %s", f.body)
	}
}

func TestPayouts(t *testing.T) {
	h := start(t, sim.Config{})
	req := protocol.PayoutRequest{Reference: "po_1", AmountMinor: 900, Currency: "DJF", MSISDN: "+25377123456", CallbackURL: h.rc.URL}
	r := h.call("POST", "/wallet_b/v1/payouts", "po_1", req)
	var po protocol.Payout
	json.Unmarshal(r.body, &po)
	if r.status != 201 || po.Status != "succeeded" {
		t.Fatalf("payout: %d %s", r.status, r.body)
	}
	if ev := h.rc.wait(t); ev.Type != protocol.EventPayoutSucceeded || ev.Data.Payout.Reference != "po_1" {
		t.Fatalf("callback %+v", ev)
	}
	st := h.call("GET", "/wallet_b/v1/payouts?reference=po_1", "", nil)
	if st.status != 200 || !strings.Contains(string(st.body), `"succeeded"`) {
		t.Fatalf("status: %s", st.body)
	}
	if r := h.call("GET", "/wallet_b/v1/payouts?reference=po_2", "", nil); r.status != 404 || r.code() != "payout_not_found" {
		t.Fatalf("unknown: %d %s", r.status, r.body)
	}
	bad := protocol.PayoutRequest{Reference: "po_3", AmountMinor: 900, Currency: "DJF", Account: "DJ0012340000", CallbackURL: h.rc.URL}
	r = h.call("POST", "/bank_a/v1/payouts", "po_3", bad)
	json.Unmarshal(r.body, &po)
	if po.Status != "failed" || po.Failure.Code != "account_not_found" {
		t.Fatalf("refused account: %s", r.body)
	}
	// The day's report has the paid payout and not the failed one.
	rep := h.call("GET", "/wallet_b/v1/reports/settlement?date="+time.Now().UTC().Format(time.DateOnly), "", nil)
	var report protocol.SettlementReport
	json.Unmarshal(rep.body, &report)
	if len(report.Entries) != 1 || report.Entries[0].Reference != "po_1" || report.Totals[0].PayoutsMinor != 900 {
		t.Fatalf("report: %s", rep.body)
	}
	if r := h.call("GET", "/wallet_b/v1/reports/settlement?date=yesterday", "", nil); r.status != 400 {
		t.Fatalf("bad date: %d", r.status)
	}
}

func TestErrorRate(t *testing.T) {
	h := start(t, sim.Config{})
	h.srv.SetFaults(1, 0)
	req := protocol.PayoutRequest{Reference: "po_e", AmountMinor: 1, Currency: "DJF", MSISDN: "+25377123456", CallbackURL: h.rc.URL}
	if r := h.call("POST", "/wallet_b/v1/payouts", "po_e", req); r.status != 500 {
		t.Fatalf("error rate 1: %d", r.status)
	}
	h.srv.SetFaults(0, 0)
	// Nothing was done: the payout is unknown, and the same key works.
	if r := h.call("GET", "/wallet_b/v1/payouts?reference=po_e", "", nil); r.status != 404 {
		t.Fatalf("after a 500: %d %s", r.status, r.body)
	}
	if r := h.call("POST", "/wallet_b/v1/payouts", "po_e", req); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d %s", r.status, r.body)
	}
}

func TestTimeoutAfterActing(t *testing.T) {
	h := start(t, sim.Config{TimeoutRate: 1})
	req := protocol.PayoutRequest{Reference: "po_t", AmountMinor: 300, Currency: "DJF", MSISDN: "+25377123456", CallbackURL: h.rc.URL}
	raw, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/wallet_b/v1/payouts", bytes.NewReader(raw))
	hr.Header.Set("Authorization", "Bearer "+apiKey)
	hr.Header.Set(protocol.HeaderIdempotencyKey, "po_t")
	if _, err := http.DefaultClient.Do(hr); err == nil {
		t.Fatal("the hung call answered")
	}
	// The provider paid: the status says so, and the callback came.
	st := h.call("GET", "/wallet_b/v1/payouts/po_t", "", nil)
	if st.status != 200 || !strings.Contains(string(st.body), `"succeeded"`) {
		t.Fatalf("status after the timeout: %d %s", st.status, st.body)
	}
	if ev := h.rc.wait(t); ev.Data.Payout.Reference != "po_t" {
		t.Fatalf("callback %+v", ev)
	}
}

func TestCallbackKnobs(t *testing.T) {
	t.Run("duplicate", func(t *testing.T) {
		h := start(t, sim.Config{DuplicateCallbacks: true})
		h.call("POST", "/wallet_b/v1/payouts", "d", protocol.PayoutRequest{Reference: "po_d", AmountMinor: 1, Currency: "DJF", MSISDN: "+25377123456", CallbackURL: h.rc.URL})
		a, b := h.rc.wait(t), h.rc.wait(t)
		if a.ID != b.ID {
			t.Fatalf("duplicates have different ids: %s %s", a.ID, b.ID)
		}
	})
	t.Run("late", func(t *testing.T) {
		h := start(t, sim.Config{LateCallbacks: true, LateDelay: 300 * time.Millisecond})
		sent := time.Now()
		h.call("POST", "/wallet_b/v1/payouts", "l", protocol.PayoutRequest{Reference: "po_l", AmountMinor: 1, Currency: "DJF", MSISDN: "+25377123456", CallbackURL: h.rc.URL})
		h.rc.wait(t)
		if time.Since(sent) < 300*time.Millisecond {
			t.Fatal("the late callback came early")
		}
	})
	t.Run("retried until acknowledged", func(t *testing.T) {
		h := start(t, sim.Config{})
		var mu sync.Mutex
		n := 0
		flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			n++
			if n == 1 {
				w.WriteHeader(503)
				return
			}
			h.rc.Config.Handler.ServeHTTP(w, r)
		}))
		defer flaky.Close()
		h.call("POST", "/wallet_b/v1/payouts", "r", protocol.PayoutRequest{Reference: "po_r", AmountMinor: 1, Currency: "DJF", MSISDN: "+25377123456", CallbackURL: flaky.URL})
		h.rc.wait(t)
		mu.Lock()
		defer mu.Unlock()
		if n != 2 {
			t.Fatalf("%d attempts", n)
		}
	})
}
