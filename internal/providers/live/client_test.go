package live

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
)

const (
	testKey    = "sk_provider_secret_key_123"
	testSecret = "callback-secret-0123456789"
)

// fakeProvider answers with handle; it counts calls by path.
type fakeProvider struct {
	*httptest.Server
	calls  atomic.Int64
	handle func(w http.ResponseWriter, r *http.Request)
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *fakeProvider {
	f := &fakeProvider{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/callback_secret" {
			w.WriteHeader(200)
			return
		}
		f.calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Idempotency-Key") == "" {
			t.Errorf("call without the API key or an idempotency key: %v", r.Header)
		}
		f.handle(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newConnections(t *testing.T, base string, timeout time.Duration, clk *clock, logs *bytes.Buffer) (*Connections, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	if logs == nil {
		logs = &bytes.Buffer{}
	}
	cfg := Config{
		Lookup: func(ctx context.Context, _ providers.Reader, merchantID, provider string) (Connection, error) {
			if merchantID == "mer_none" {
				return Connection{}, errs.NotFound("provider connection", provider)
			}
			return Connection{BaseURL: base, APIKey: testKey, CallbackSecret: testSecret, Timeout: timeout}, nil
		},
		BreakerOpen: time.Minute, MaxInFlight: 2, Registry: reg,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if clk != nil {
		cfg.Now = clk.now
	}
	return NewConnections(cfg), reg
}

func call(t *testing.T, c *Connections, merchant string) (response, error) {
	t.Helper()
	cl, err := c.client(context.Background(), merchant, "bank_a")
	if err != nil {
		return response{}, err
	}
	return cl.do(context.Background(), request{op: "status", method: "GET", path: "/v1/payments/pay_1"})
}

// answeredOnTheThirdCall makes one call and checks that it got f's 200 on
// f's third call, every attempt under the same idempotency key (keys holds
// the keys f saw).
func answeredOnTheThirdCall(t *testing.T, c *Connections, f *fakeProvider, keys *sync.Map) {
	t.Helper()
	resp, err := call(t, c, "mer_1")
	if err != nil || resp.status != 200 || f.calls.Load() != 3 {
		t.Fatalf("%v %d after %d calls", err, resp.status, f.calls.Load())
	}
	distinct := 0
	keys.Range(func(any, any) bool { distinct++; return true })
	if distinct != 1 {
		t.Fatalf("%d idempotency keys for one call", distinct)
	}
}

func TestRetriesServerErrorsUnderTheSameKey(t *testing.T) {
	var keys sync.Map
	n := atomic.Int64{}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		keys.Store(r.Header.Get("Idempotency-Key"), true)
		if n.Add(1) < 3 {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte(`{"id":"pay_1"}`))
	})
	c, _ := newConnections(t, f.URL, 5*time.Second, nil, nil)
	answeredOnTheThirdCall(t, c, f, &keys)
	// Four 500s in a row: three attempts, then a 502 provider_error.
	n.Store(-10)
	_, err := call(t, c, "mer_1")
	if e := errs.As(err); e == nil || e.Code != "provider_error" || e.Kind != errs.KindProvider {
		t.Fatalf("after retries: %v", err)
	}
}

// TestKeyInUseWaitsForTheFirstRequest: a 409 idempotency_key_in_use (the
// first request under the key, from a payd process that died, still runs at
// the provider) is asked again under the same key after the retry waits,
// is not a provider failure, and a payment that is still in use after the
// last wait has an unknown outcome (payd leaves the intent processing).
func TestKeyInUseWaitsForTheFirstRequest(t *testing.T) {
	inUse := atomic.Int64{}
	var keys sync.Map
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		keys.Store(r.Header.Get("Idempotency-Key"), true)
		if inUse.Add(-1) >= 0 {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":{"code":"idempotency_key_in_use","message":"the first request with this Idempotency-Key is still running"}}`))
			return
		}
		w.Write([]byte(`{"id":"pay_1"}`))
	})
	var logs bytes.Buffer
	c, _ := newConnections(t, f.URL, 5*time.Second, nil, &logs)
	inUse.Store(2)
	answeredOnTheThirdCall(t, c, f, &keys)
	inUse.Store(10)
	resp, err := call(t, c, "mer_1")
	if err != nil || !resp.keyInUse() || f.calls.Load() != 6 {
		t.Fatalf("still in use: %v %d after %d calls", err, resp.status, f.calls.Load())
	}
	if strings.Contains(logs.String(), "provider call failed") {
		t.Fatalf("a key in use counted as a provider failure:\n%s", logs.String())
	}
	a := &paymentAdapter{c: c, provider: "bank_a"}
	if _, err := a.result(resp, nil); !errors.Is(err, providers.ErrNoAnswer) {
		t.Fatalf("a payment still in use at the provider: %v, want its outcome unknown", err)
	}
}

func TestFourHundredsAreFinalAndNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"code":"invalid_msisdn","message":"no","field":"msisdn"}}`))
	})
	c, _ := newConnections(t, f.URL, 5*time.Second, nil, nil)
	resp, err := call(t, c, "mer_1")
	if err != nil || resp.status != 400 || resp.errorBody().Code != "invalid_msisdn" || f.calls.Load() != 1 {
		t.Fatalf("%v %d %d", err, resp.status, f.calls.Load())
	}
}

func TestTimeoutIsNoAnswer(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c, _ := newConnections(t, f.URL, 50*time.Millisecond, nil, nil)
	if _, err := call(t, c, "mer_1"); !errors.Is(err, errNoAnswer) {
		t.Fatalf("got %v", err)
	}
	// One call at most: on a loaded machine the 50 ms can run out before
	// the request reaches the server at all.
	if f.calls.Load() > 1 {
		t.Fatalf("a timed-out call was repeated: %d", f.calls.Load())
	}
}

func TestBreakerOpensAndTrialCloses(t *testing.T) {
	failing := atomic.Bool{}
	failing.Store(true)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(503)
			return
		}
		w.Write([]byte(`{}`))
	})
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	c, reg := newConnections(t, f.URL, 5*time.Second, clk, nil)
	for i := 0; i < 5; i++ {
		if _, err := call(t, c, "mer_1"); errs.As(err) == nil || errs.As(err).Code != "provider_error" {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	sent := f.calls.Load()
	_, err := call(t, c, "mer_1")
	if e := errs.As(err); e == nil || e.Code != "provider_unavailable" || e.Kind != errs.KindUnavailable {
		t.Fatalf("open breaker: %v", err)
	}
	if f.calls.Load() != sent {
		t.Fatal("an open breaker let a call through")
	}
	if c.Ready(context.Background(), "mer_1", "bank_a") == nil {
		t.Fatal("Ready says yes while open")
	}
	if g := gauge(reg, "payd_provider_breakers_open", "bank_a"); g != 1 {
		t.Fatalf("gauge %v", g)
	}
	// Another merchant's breaker is its own.
	if _, err := call(t, c, "mer_2"); errs.As(err).Code != "provider_error" {
		t.Fatalf("other merchant: %v", err)
	}
	// After the open period one trial goes through; it fails: open again.
	clk.add(time.Minute)
	if _, err := call(t, c, "mer_1"); errs.As(err).Code != "provider_error" {
		t.Fatalf("trial: %v", err)
	}
	if _, err := call(t, c, "mer_1"); errs.As(err).Code != "provider_unavailable" {
		t.Fatalf("after a failed trial: %v", err)
	}
	// Next trial succeeds: closed.
	clk.add(time.Minute)
	failing.Store(false)
	for i := 0; i < 3; i++ {
		if _, err := call(t, c, "mer_1"); err != nil {
			t.Fatalf("closed again, call %d: %v", i, err)
		}
	}
	if g := gauge(reg, "payd_provider_breakers_open", "bank_a"); g != 0 {
		t.Fatalf("gauge %v", g)
	}
	if !has(reg, "payd_provider_call_duration_seconds") || !has(reg, "payd_provider_call_errors_total") {
		t.Fatal("no latency or error series")
	}
}

func TestSlotsBoundConcurrencyPerProvider(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	entered := make(chan string, 10)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		entered <- r.URL.Path
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Write([]byte(`{}`))
	})
	c, _ := newConnections(t, f.URL, 5*time.Second, nil, nil)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); call(t, c, "mer_1") }()
	}
	<-entered
	<-entered
	// Both of bank_a's slots are held: a third call waits for one only as
	// long as its deadline, then is refused without calling.
	cl, _ := c.client(context.Background(), "mer_3", "bank_a")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := cl.do(ctx, request{op: "status", method: "GET", path: "/v1/payments/pay_3"})
	cancel()
	if e := errs.As(err); e == nil || e.Code != "provider_unavailable" {
		t.Fatalf("third call: %v", err)
	}
	// Another provider has its own slots and pool: its call goes through
	// while bank_a's are held.
	other, _ := c.client(context.Background(), "mer_1", "wallet_c")
	done := make(chan error, 1)
	go func() {
		_, err := other.do(context.Background(), request{op: "status", method: "GET", path: "/other"})
		done <- err
	}()
	if p := <-entered; p != "/other" {
		t.Fatalf("entered %s", p)
	}
	free()
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatalf("other provider: %v", err)
	}
}

func TestNoSecretsInErrorsOrLogs(t *testing.T) {
	logs := &bytes.Buffer{}
	c, _ := newConnections(t, "http://user:"+testKey+"@127.0.0.1:1", time.Second, nil, logs)
	_, err := call(t, c, "mer_1")
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	for _, s := range []string{err.Error(), errs.As(err).Message, logs.String()} {
		if strings.Contains(s, testKey) || strings.Contains(s, testSecret) {
			t.Fatalf("a secret leaked: %s", s)
		}
	}
	if !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("message %q", err)
	}
	if _, err := c.client(context.Background(), "mer_none", "bank_a"); errs.As(err) == nil || errs.As(err).Code != "provider_unavailable" {
		t.Fatalf("not connected: %v", err)
	}
}

// gauge reads a gauge with the given provider label.
func gauge(reg *prometheus.Registry, name, provider string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "provider" && l.GetValue() == provider {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

func has(reg *prometheus.Registry, name string) bool {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return true
		}
	}
	return false
}
