package live_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

// testTimeoutAfterCharge: the provider records the payment (and pays the
// payout), then never answers, and its callbacks are lost. The create
// answers 201 with the intent processing; reconciliation asks the provider
// and settles it, once, with one credit.
func testTimeoutAfterCharge(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	hung := apptest.StartSim(t, sim.Config{TimeoutRate: 1, DropCallbacks: true, PushDelay: 20 * time.Millisecond})
	m := goLive(t, e, hung, "300ms", "wallet_c", "bank_a", "wallet_b")
	in := m.create(t, map[string]any{"amount": 700, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377400001"}, 201)
	if in.Status != "processing" || in.NextAction != nil {
		t.Fatalf("after a timeout: %+v", in)
	}
	if got := m.settle(t, in.ID); got.Status != "succeeded" || got.AmountCapturedMinor != 700 {
		t.Fatalf("reconciled: %+v", got)
	}
	settledOnce(t, e, in.ID)
	if a := m.available(t, "DJF"); a != 700 {
		t.Fatalf("available %d", a)
	}

	t.Run("SMS code sent before the timeout", func(t *testing.T) {
		in := m.create(t, map[string]any{"amount": 300, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377400002"}, 201)
		if in.Status != "processing" {
			t.Fatalf("after a timeout: %+v", in)
		}
		// Reconciliation learns the provider waits for the code.
		deadline := time.Now().Add(20 * time.Second)
		for in.Status == "processing" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			in = m.intent(t, in.ID)
		}
		if in.Status != "requires_action" || in.NextAction == nil || in.NextAction.Type != "collect_otp" {
			t.Fatalf("reconciled: %+v", in)
		}
		got := decode(t, m.post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": hung.OTP("+25377400002")}), 200)
		if got.Status != "succeeded" {
			t.Fatalf("confirm: %+v", got)
		}
		settledOnce(t, e, in.ID)
	})

	t.Run("payout", func(t *testing.T) {
		r := m.post("/v1/payouts", map[string]any{"amount": 400, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377400003"})
		var p payout
		r.JSON(t, &p)
		if r.Status != 201 || p.Status != "processing" {
			t.Fatalf("payout after a timeout: %d %s", r.Status, r.Body)
		}
		deadline := time.Now().Add(20 * time.Second)
		for p.Status == "processing" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			p = m.payout(t, p.ID)
		}
		if p.Status != "succeeded" {
			t.Fatalf("payout reconciled: %+v", p)
		}
		if n := count(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ? AND kind = 'payout_paid'", p.ID); n != 1 {
			t.Fatalf("%d payout postings", n)
		}
	})
	m.requireNoSecrets(t)
}

// testCallbackTwice: every callback arrives twice (and a stale one after
// the final one): the intent and the payout settle once.
func testCallbackTwice(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	dup := apptest.StartSim(t, sim.Config{DuplicateCallbacks: true, PushDelay: 20 * time.Millisecond})
	m := goLive(t, e, dup, "5s", "wallet_c", "wallet_b")
	var ids []string
	for i := 0; i < 3; i++ {
		in := m.create(t, map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": fmt.Sprintf("+253775010%02d", i+1)}, 201)
		ids = append(ids, in.ID)
	}
	for _, id := range ids {
		if got := m.settle(t, id); got.Status != "succeeded" {
			t.Fatalf("%s: %+v", id, got)
		}
	}
	r := m.post("/v1/payouts", map[string]any{"amount": 50, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377500009"})
	if r.Status != 201 {
		t.Fatalf("payout: %d %s", r.Status, r.Body)
	}
	// Wait for the second deliveries: each is answered as a duplicate.
	deadline := time.Now().Add(20 * time.Second)
	for callbacksCounted(t, e, "duplicate") < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := callbacksCounted(t, e, "duplicate"); n < 4 {
		t.Fatalf("%v duplicate deliveries seen", n)
	}
	for _, id := range ids {
		settledOnce(t, e, id)
	}
	if a := m.available(t, "DJF"); a != 250 {
		t.Fatalf("available %d, want 250", a)
	}

	// Out of order: a failed report after the success changes nothing.
	stale := protocol.Payment{ID: "pay_stale", Object: "payment", Reference: ids[0], Status: "failed", AmountMinor: 100, Currency: "DJF",
		Failure: &protocol.Failure{Code: "expired", Message: "late"}}
	if r := postCallback(t, e, m.id, "wallet_c", "prov_cbsec_wallet_c_"+m.id, "pevt_stale_"+ids[0], protocol.EventData{Payment: &stale}, time.Now()); r.Status != 200 {
		t.Fatalf("stale callback: %d %s", r.Status, r.Body)
	}
	if got := m.intent(t, ids[0]); got.Status != "succeeded" {
		t.Fatalf("a stale callback moved a succeeded intent: %+v", got)
	}
	settledOnce(t, e, ids[0])
}

// callbacksCounted reads payd_provider_callbacks_total for a result.
func callbacksCounted(t *testing.T, e *apptest.Env, result string) float64 {
	t.Helper()
	mfs, err := e.Main.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "payd_provider_callbacks_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// postCallback posts a signed callback as a provider would.
func postCallback(t *testing.T, e *apptest.Env, merchantID, provider, secret, eventID string, data protocol.EventData, at time.Time) *apptest.Response {
	t.Helper()
	typ := "payment." + data.Payment.Status
	ev := protocol.Event{ID: eventID, Object: "event", Type: typ, CreatedAt: at, Data: data}
	body, _ := json.Marshal(ev)
	return e.Do(apptest.Request{Method: "POST", Path: "/providers/" + provider + "/callbacks?merchant=" + merchantID, Body: body,
		Headers: map[string]string{protocol.HeaderEventID: eventID, protocol.HeaderEventType: typ,
			protocol.HeaderSignature: protocol.Sign(secret, at, eventID, body)}})
}

// testCallbackBeforeAnswer: the provider acts, its callback arrives, and
// only then does the answer of payd's call: the intent (or payout) settles
// once, and the call answers with the settled object.
func testCallbackBeforeAnswer(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	slow := apptest.StartSim(t, sim.Config{AnswerDelay: 300 * time.Millisecond})
	m := goLive(t, e, slow, "5s", "bank_a", "wallet_c", "wallet_b")

	in := m.create(t, map[string]any{"amount": 900, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377600001"}, 201)
	got := decode(t, m.post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": slow.OTP("+25377600001")}), 200)
	answered := time.Now()
	if got.Status != "succeeded" {
		t.Fatalf("confirm: %+v", got)
	}
	var at int64
	if err := e.Main.DB.QueryRow(t.Context(), "SELECT created_at FROM provider_callbacks WHERE object_id = ?", in.ID).Scan(&at); err != nil {
		t.Fatalf("the callback was not recorded before the answer: %v", err)
	}
	if time.UnixMicro(at).After(answered) {
		t.Fatal("the callback came after the answer; the test proves nothing")
	}
	settledOnce(t, e, in.ID)

	// A refusal at initiate: the failed callback comes first, then the 402.
	ref := m.create(t, map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377600000"}, 402)
	if ref.Status != "canceled" || ref.LastError == nil || ref.LastError.Code != "insufficient_funds" {
		t.Fatalf("refused: %+v", ref)
	}
	if n := count(t, e, "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'payment_intent.canceled'", ref.ID); n != 1 {
		t.Fatalf("%d canceled events", n)
	}

	r := m.post("/v1/payouts", map[string]any{"amount": 200, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377600002"})
	var p payout
	r.JSON(t, &p)
	if r.Status != 201 || p.Status != "succeeded" {
		t.Fatalf("payout: %d %s", r.Status, r.Body)
	}
	if n := count(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ? AND kind = 'payout_paid'", p.ID); n != 1 {
		t.Fatalf("%d payout postings", n)
	}
	if a := m.available(t, "DJF"); a != 700 {
		t.Fatalf("available %d, want 700", a)
	}
}

// testCallbackSecurity: only a callback signed with the merchant's secret
// for that provider, recent, about the merchant's own matching object,
// changes anything.
func testCallbackSecurity(t *testing.T, e *apptest.Env, s *apptest.Sim) {
	m := goLive(t, e, s, "5s", "wallet_a")
	other := goLive(t, e, s, "5s", "wallet_a")
	in := m.create(t, map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_a", "return_url": "https://shop.example/r",
		"metadata": map[string]string{"wallet_a_mode": "hpp"}}, 201)
	secret := "prov_cbsec_wallet_a_" + m.id
	ok := protocol.Payment{ID: "pay_forged", Object: "payment", Reference: in.ID, Status: "succeeded", AmountMinor: 100, CapturedMinor: 100, Currency: "DJF"}
	cases := []struct {
		name     string
		merchant string
		provider string
		secret   string
		payment  protocol.Payment
		at       time.Time
		status   int
		code     string
	}{
		{"wrong secret", m.id, "wallet_a", "not-the-secret-0123456789", ok, time.Now(), 400, "signature_invalid"},
		{"another merchant's secret", m.id, "wallet_a", "prov_cbsec_wallet_a_" + other.id, ok, time.Now(), 400, "signature_invalid"},
		{"provider not connected", m.id, "bank_b", secret, ok, time.Now(), 400, "signature_invalid"},
		{"unknown merchant", "mer_nobody", "wallet_a", secret, ok, time.Now(), 400, "signature_invalid"},
		{"too old", m.id, "wallet_a", secret, ok, time.Now().Add(-10 * time.Minute), 400, "signature_invalid"},
		{"another merchant's intent", other.id, "wallet_a", "prov_cbsec_wallet_a_" + other.id, ok, time.Now(), 404, "resource_missing"},
		{"amount does not match", m.id, "wallet_a", secret, func() protocol.Payment { p := ok; p.AmountMinor, p.CapturedMinor = 1000, 1000; return p }(), time.Now(), 400, "parameter_invalid"},
	}
	for i, c := range cases {
		r := postCallback(t, e, c.merchant, c.provider, c.secret, fmt.Sprintf("pevt_sec_%s_%d", in.ID, i), protocol.EventData{Payment: &c.payment}, c.at)
		if r.Status != c.status || r.ErrorCode() != c.code {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), secret) {
			t.Errorf("%s: the secret is in the answer", c.name)
		}
	}
	if got := m.intent(t, in.ID); got.Status != "requires_action" {
		t.Fatalf("a refused callback changed the intent: %+v", got)
	}
	// No signature header at all.
	r := e.Do(apptest.Request{Method: "POST", Path: "/providers/wallet_a/callbacks?merchant=" + m.id, Body: map[string]string{"id": "x"},
		Headers: map[string]string{protocol.HeaderEventID: "x"}})
	if r.Status != 400 || r.ErrorCode() != "signature_invalid" {
		t.Fatalf("unsigned: %d %s", r.Status, r.Body)
	}
	// The right one settles it, once, however often it is sent.
	for i := 0; i < 3; i++ {
		r := postCallback(t, e, m.id, "wallet_a", secret, "pevt_good_"+in.ID, protocol.EventData{Payment: &ok}, time.Now())
		if r.Status != 200 {
			t.Fatalf("good callback: %d %s", r.Status, r.Body)
		}
		if dup := strings.Contains(string(r.Body), `"duplicate":true`); dup != (i > 0) {
			t.Fatalf("delivery %d: %s", i, r.Body)
		}
	}
	settledOnce(t, e, in.ID)
	m.requireNoSecrets(t)
}

// testServerErrorsUnderLoad: 30% of the provider's answers are 500s while
// 16 clients make 48 payments. Each create answers 201 (the adapter's
// retries got through) or 502 (they did not); nothing is charged twice,
// and once the provider is well again every intent ends succeeded (it
// reached the provider) or canceled with provider_error (it never did).
func testServerErrorsUnderLoad(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	flaky := apptest.StartSim(t, sim.Config{PushDelay: 20 * time.Millisecond})
	m := goLive(t, e, flaky, "2s", "wallet_c")
	fund := m.create(t, map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377700001"}, 201) // registers the callback secret
	m.settle(t, fund.ID)
	flaky.SetFaults(0.3, 0)
	var mu sync.Mutex
	codes := map[int]int{}
	var ids []string
	var wg sync.WaitGroup
	var seq atomic.Int64
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				n := seq.Add(1)
				r := m.post("/v1/payment_intents", map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c",
					"customer_msisdn": fmt.Sprintf("+2537771%04d", n)})
				var in intent
				json.Unmarshal(r.Body, &in)
				mu.Lock()
				codes[r.Status]++
				switch r.Status {
				case 201:
					ids = append(ids, in.ID)
				case 502:
					var b struct {
						Error struct {
							Code          string `json:"code"`
							PaymentIntent string `json:"payment_intent"`
						} `json:"error"`
					}
					json.Unmarshal(r.Body, &b)
					if b.Error.Code != "provider_error" || b.Error.PaymentIntent == "" {
						t.Errorf("502: %s", r.Body)
					}
					ids = append(ids, b.Error.PaymentIntent)
				case 503:
				default:
					t.Errorf("create under 500s: %d %s", r.Status, r.Body)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	flaky.SetFaults(0, 0)
	t.Logf("answers under 30%% provider 500s: %v", codes)
	succeeded := 0
	for _, id := range ids {
		got := m.settle(t, id)
		switch {
		case got.Status == "succeeded":
			succeeded++
			settledOnce(t, e, id)
		case got.Status == "canceled" && got.LastError != nil && got.LastError.Code == "provider_error":
		default:
			t.Fatalf("%s ended %+v", id, got)
		}
	}
	if succeeded < codes[201] {
		t.Fatalf("%d succeeded, but %d creates were answered 201", succeeded, codes[201])
	}
	if a := m.available(t, "DJF"); a != 100+int64(succeeded)*10 {
		t.Fatalf("available %d, want %d", a, 100+succeeded*10)
	}
}

// testBreaker: after 5 consecutive failures the merchant's breaker for the
// provider opens: creates answer 503 at once and write nothing, the other
// providers are unaffected; after PAYD_BREAKER_OPEN one trial goes through
// and, the provider well again, closes it.
func testBreaker(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	down := apptest.StartSim(t, sim.Config{PushDelay: 20 * time.Millisecond})
	m := goLive(t, e, down, "5s", "wallet_c", "bank_a")
	body := func(n int) map[string]any {
		return map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": fmt.Sprintf("+2537780010%d", n)}
	}
	m.create(t, body(0), 201)
	m.create(t, map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377800009"}, 201)
	down.SetFaults(1, 0)
	for i := 1; i <= 5; i++ {
		if r := m.post("/v1/payment_intents", body(i)); r.Status != 502 || r.ErrorCode() != "provider_error" {
			t.Fatalf("failure %d: %d %s", i, r.Status, r.Body)
		}
	}
	before := count(t, e, "SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ?", m.id)
	r := m.post("/v1/payment_intents", body(6))
	if r.Status != 503 || r.ErrorCode() != "provider_unavailable" {
		t.Fatalf("open breaker: %d %s", r.Status, r.Body)
	}
	if count(t, e, "SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ?", m.id) != before {
		t.Fatal("a create refused by the open breaker wrote an intent")
	}
	if !strings.Contains(metrics(t, e), `payd_provider_breakers_open{provider="wallet_c"} 1`) {
		t.Fatal("the breaker gauge does not show the open breaker")
	}
	// bank_a of the same merchant has its own breaker (the provider fails
	// there too, but the breaker is closed: the call is made).
	if r := m.post("/v1/payment_intents", map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377800008"}); r.Status != 502 {
		t.Fatalf("another provider while wallet_c's breaker is open: %d %s", r.Status, r.Body)
	}
	down.SetFaults(0, 0)
	time.Sleep(500 * time.Millisecond) // PAYD_BREAKER_OPEN is 400 ms here
	// The trial call is made: the provider's answer leaves the intent
	// waiting for the customer, or already paid when the simulator's push
	// (20 ms later) was handled before the create answered.
	switch in := m.create(t, body(7), 201); in.Status {
	case "requires_action":
	case "succeeded":
		paidByCallback(t, e, in.ID)
	default:
		t.Fatalf("trial: %+v", in)
	}
	for i := 8; i < 10; i++ {
		m.create(t, body(i), 201)
	}
	if !strings.Contains(metrics(t, e), `payd_provider_breakers_open{provider="wallet_c"} 0`) {
		t.Fatal("the breaker gauge does not show the breaker closed")
	}
	m.requireNoSecrets(t, []byte(metrics(t, e)))
}

func metrics(t *testing.T, e *apptest.Env) string {
	t.Helper()
	resp, err := http.Get(e.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// testSlowProviderIsolated: while every call to wallet_c hangs at the
// provider, payments on bank_a go through: they finish, one after the
// other, before any wallet_c call is let go.
func testSlowProviderIsolated(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	defer release()
	var held atomic.Int64
	slow := apptest.StartSim(t, sim.Config{Before: func(provider, op string) {
		if provider == "wallet_c" && op == "initiate" {
			held.Add(1)
			<-gate
		}
	}})
	m := goLive(t, e, slow, "20s", "wallet_c", "bank_a")
	flow := func(i int) time.Duration {
		start := time.Now()
		msisdn := fmt.Sprintf("+2537790010%d", i)
		in := m.create(t, map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_a", "customer_msisdn": msisdn}, 201)
		if got := decode(t, m.post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": slow.OTP(msisdn)}), 200); got.Status != "succeeded" {
			t.Fatalf("bank_a: %+v", got)
		}
		return time.Since(start)
	}
	var baseline []time.Duration
	for i := 0; i < 3; i++ {
		baseline = append(baseline, flow(i))
	}
	const stuck = 12
	var done atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < stuck; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := m.post("/v1/payment_intents", map[string]any{"amount": 10, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": fmt.Sprintf("+253779101%02d", i)})
			done.Add(1)
			if r.Status != 201 {
				t.Errorf("wallet_c after release: %d %s", r.Status, r.Body)
			}
		}(i)
	}
	for held.Load() < stuck {
		time.Sleep(5 * time.Millisecond)
	}
	var during []time.Duration
	for i := 3; i < 8; i++ {
		during = append(during, flow(i))
	}
	if n := done.Load(); n != 0 {
		t.Fatalf("%d wallet_c calls ended before they were let go", n)
	}
	t.Logf("bank_a create+confirm: %v before, %v while wallet_c hung", baseline, during)
	release()
	wg.Wait()
}
