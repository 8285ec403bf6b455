package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a fake payd answering with a scripted sequence and recording
// what each attempt carried.
type recorder struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
	answer   func(n int, w http.ResponseWriter, r *http.Request)
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := len(rc.requests)
	rc.requests = append(rc.requests, r)
	rc.bodies = append(rc.bodies, string(b))
	rc.mu.Unlock()
	w.Header().Set("Request-Id", fmt.Sprintf("req_%d", n))
	rc.answer(n, w, r)
}

func writeError(w http.ResponseWriter, status int, typ, code, param string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"type": typ, "code": code, "message": code + " message", "param": param, "request_id": w.Header().Get("Request-Id")}})
}

const intentJSON = `{"id":"pi_1","object":"payment_intent","status":"succeeded","amount_minor":1500,"amount_captured_minor":1500,
"amount_refunded_minor":0,"refunded":false,"currency":"DJF","provider":"bank_a","customer_msisdn":null,"description":null,
"metadata":{},"return_url":null,"next_action":null,"last_error":null,"payment_method_details":null,"livemode":false,
"created_at":"2026-11-21T21:03:33Z","succeeded_at":"2026-11-21T21:03:34Z","canceled_at":null}`

// testClient returns a client for srv whose waits are recorded, not slept.
func testClient(t *testing.T, h http.Handler, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := New("sk_test_abc", append([]Option{WithBaseURL(srv.URL)}, opts...)...)
	var waits []time.Duration
	var mu sync.Mutex
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &waits
}

func TestIdempotencyKeyKeptAcrossRetries(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0: // the connection drops before any answer
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case 1: // the first attempt is still running on the server
			writeError(w, 409, TypeIdempotency, CodeIdempotencyKeyInUse, "")
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			io.WriteString(w, intentJSON)
		}
	}}
	c, waits := testClient(t, rc)
	var resp Response
	pi, err := c.CreatePaymentIntent(context.Background(), &PaymentIntentCreate{Amount: Int64(1500), Currency: "DJF", Provider: "bank_a"}, WithResponse(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if pi.ID != "pi_1" || pi.Status != PaymentIntentStatusSucceeded || pi.AmountMinor != 1500 {
		t.Fatalf("intent %+v", pi)
	}
	if len(rc.requests) != 3 || resp.Attempts != 3 {
		t.Fatalf("%d requests, %d attempts; want 3", len(rc.requests), resp.Attempts)
	}
	key := rc.requests[0].Header.Get("Idempotency-Key")
	if !strings.HasPrefix(key, "payd-go-") || resp.IdempotencyKey != key {
		t.Fatalf("generated key %q (response says %q)", key, resp.IdempotencyKey)
	}
	for i, r := range rc.requests {
		if got := r.Header.Get("Idempotency-Key"); got != key {
			t.Errorf("attempt %d sent key %q, want %q", i, got, key)
		}
		if rc.bodies[i] != rc.bodies[0] {
			t.Errorf("attempt %d sent body %s, want %s", i, rc.bodies[i], rc.bodies[0])
		}
	}
	if rc.bodies[0] != `{"amount":1500,"currency":"DJF","provider":"bank_a"}` {
		t.Errorf("body %s", rc.bodies[0])
	}
	if len(*waits) != 2 {
		t.Fatalf("waits %v, want 2", *waits)
	}

	// A second logical call gets a new key.
	rc.answer = func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(201); io.WriteString(w, intentJSON) }
	if _, err := c.CreatePaymentIntent(context.Background(), &PaymentIntentCreate{Amount: Int64(1500), Currency: "DJF", Provider: "bank_a"}); err != nil {
		t.Fatal(err)
	}
	if got := rc.requests[3].Header.Get("Idempotency-Key"); got == key || got == "" {
		t.Fatalf("second call reused or lacked the key: %q", got)
	}
	// A caller's own key is sent as given.
	if _, err := c.CreatePaymentIntent(context.Background(), &PaymentIntentCreate{Amount: Int64(1500), Currency: "DJF", Provider: "bank_a"}, WithIdempotencyKey("order-1001")); err != nil {
		t.Fatal(err)
	}
	if got := rc.requests[4].Header.Get("Idempotency-Key"); got != "order-1001" {
		t.Fatalf("key %q", got)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		if n < 2 {
			w.Header().Set("Retry-After", strconv.Itoa(n+2))
			writeError(w, 429, TypeRateLimit, CodeRateLimited, "")
			return
		}
		io.WriteString(w, `{"object":"balance","livemode":false,"balances":[{"currency":"DJF","available":5,"reserved":0,"pending":0}]}`)
	}}
	c, waits := testClient(t, rc)
	bal, err := c.GetBalance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if bal.Balances[0].Available != 5 {
		t.Fatalf("balance %+v", bal)
	}
	if want := []time.Duration{2 * time.Second, 3 * time.Second}; fmt.Sprint(*waits) != fmt.Sprint(want) {
		t.Fatalf("waited %v, want %v", *waits, want)
	}
	if rc.requests[0].Header.Get("Idempotency-Key") != "" {
		t.Fatal("a GET carried an Idempotency-Key")
	}
}

// TestDatabaseUnavailableRetried: a 503 database_unavailable (nothing was
// done) is retried with the same key and body after its Retry-After; any
// other 503 is returned at once.
func TestDatabaseUnavailableRetried(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		if n < 2 {
			w.Header().Set("Retry-After", "1")
			writeError(w, 503, TypeAPI, CodeDatabaseUnavailable, "")
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, `{"id":"pi_1","object":"payment_intent","amount":1500,"currency":"DJF","status":"requires_action"}`)
	}}
	c, waits := testClient(t, rc)
	if _, err := c.CreatePaymentIntent(context.Background(), &PaymentIntentCreate{Amount: Int64(1500), Currency: "DJF", Provider: "bank_a"}); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{time.Second, time.Second}; fmt.Sprint(*waits) != fmt.Sprint(want) {
		t.Fatalf("waited %v, want %v", *waits, want)
	}
	key := rc.requests[0].Header.Get("Idempotency-Key")
	for i, r := range rc.requests {
		if r.Header.Get("Idempotency-Key") != key || key == "" {
			t.Fatalf("request %d carried key %q, the first %q", i, r.Header.Get("Idempotency-Key"), key)
		}
	}

	other := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeError(w, 503, TypeProvider, "provider_unavailable", "")
	}}
	c, waits = testClient(t, other)
	if _, err := c.GetBalance(context.Background()); err == nil || len(other.requests) != 1 || len(*waits) != 0 {
		t.Fatalf("provider_unavailable: err %v after %d requests; want it returned at once", err, len(other.requests))
	}
}

func TestRetryAfterTooLongIsReturned(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		writeError(w, 429, TypeRateLimit, CodeRateLimited, "")
	}}
	c, waits := testClient(t, rc, WithMaxRetryWait(10*time.Second))
	_, err := c.GetBalance(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != 429 || e.Code != CodeRateLimited {
		t.Fatalf("err %v", err)
	}
	if len(rc.requests) != 1 || len(*waits) != 0 {
		t.Fatalf("%d requests, waits %v; want 1 and none", len(rc.requests), *waits)
	}
}

func TestRetriesGiveUp(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		writeError(w, 409, TypeIdempotency, CodeIdempotencyKeyInUse, "")
	}}
	c, waits := testClient(t, rc, WithMaxRetries(2), WithBackoff(100*time.Millisecond, time.Second))
	_, err := c.CreateRefund(context.Background(), &RefundCreate{PaymentIntent: "pi_1"})
	if ErrorCode(err) != CodeIdempotencyKeyInUse {
		t.Fatalf("err %v", err)
	}
	if len(rc.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(rc.requests))
	}
	// exponential: the second wait is drawn from a doubled range
	w := *waits
	if len(w) != 2 || w[0] < 50*time.Millisecond || w[0] > 100*time.Millisecond || w[1] < 100*time.Millisecond || w[1] > 200*time.Millisecond {
		t.Fatalf("waits %v", w)
	}
}

func TestErrorsAreNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 404, 409, 422, 500} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
				writeError(w, status, TypeInvalidRequest, "some_code", "amount")
			}}
			c, _ := testClient(t, rc)
			_, err := c.CreatePayout(context.Background(), &PayoutCreate{Currency: "DJF", Provider: "wallet_a"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T %v", err, err)
			}
			if e.HTTPStatus != status || e.Code != "some_code" || e.Param != "amount" || e.RequestID != "req_0" || e.Type != TypeInvalidRequest || e.Message != "some_code message" {
				t.Fatalf("error %+v", e)
			}
			if len(rc.requests) != 1 {
				t.Fatalf("%d requests", len(rc.requests))
			}
		})
	}
}

func TestNetworkErrorAfterRetries(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	c := New("sk_test_x", WithBaseURL(url), WithMaxRetries(2))
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	_, err := c.GetBalance(context.Background())
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Attempts != 3 || len(waits) != 2 {
		t.Fatalf("err %v, waits %v", err, waits)
	}
}

func TestContextEndsTheWait(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "20")
		writeError(w, 429, TypeRateLimit, CodeRateLimited, "")
	}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	c := New("sk_test_x", WithBaseURL(srv.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetBalance(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the wait outlived the context")
	}
}

func TestRefusedPaymentReturnsIntentAndError(t *testing.T) {
	refused := strings.Replace(strings.Replace(intentJSON, `"status":"succeeded"`, `"status":"canceled"`, 1),
		`"last_error":null`, `"last_error":{"code":"insufficient_funds","message":"too low","provider":"wallet_a"}`, 1)
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(402)
		io.WriteString(w, refused)
	}}
	c, _ := testClient(t, rc)
	pi, err := c.CreatePaymentIntent(context.Background(), &PaymentIntentCreate{Amount: Int64(2), Currency: "DJF", Provider: "wallet_a"}, WithScenario(SandboxScenarioInsufficientFunds))
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != 402 || e.Code != "insufficient_funds" || e.Type != TypeProvider {
		t.Fatalf("err %+v", err)
	}
	if pi == nil || pi.Status != PaymentIntentStatusCanceled || pi.LastError == nil || pi.LastError.Code != "insufficient_funds" {
		t.Fatalf("intent %+v", pi)
	}
	if got := rc.requests[0].Header.Get("X-Service-Scenario"); got != "insufficient_funds" {
		t.Fatalf("scenario header %q", got)
	}
}

func TestHeaders(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"status":"ok"}`) }}
	c, _ := testClient(t, rc, WithUserAgent("shop/1.2"))
	if _, err := c.GetHealth(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := rc.requests[0]
	if r.Header.Get("Authorization") != "Bearer sk_test_abc" {
		t.Errorf("authorization %q", r.Header.Get("Authorization"))
	}
	if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "shop/1.2 payd-go/"+Version+" ") {
		t.Errorf("user agent %q", ua)
	}
}

func TestIteratorWalksCursors(t *testing.T) {
	ids := []string{"pi_7", "pi_6", "pi_5", "pi_4", "pi_3"}
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		start := 0
		if a := q.Get("starting_after"); a != "" {
			for i, id := range ids {
				if id == a {
					start = i + 1
				}
			}
		}
		end := min(start+2, len(ids))
		var data []string
		for _, id := range ids[start:end] {
			data = append(data, strings.Replace(intentJSON, `"pi_1"`, `"`+id+`"`, 1))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"has_more":%v}`, strings.Join(data, ","), end < len(ids))
	}}
	c, _ := testClient(t, rc)
	var got []string
	for pi, err := range c.AllPaymentIntents(context.Background(), &ListPaymentIntentsParams{Limit: 2, Status: PaymentIntentStatusSucceeded}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pi.ID)
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("got %v", got)
	}
	if len(rc.requests) != 3 {
		t.Fatalf("%d pages fetched, want 3", len(rc.requests))
	}
	for i, want := range []string{"", "pi_6", "pi_4"} {
		q := rc.requests[i].URL.Query()
		if q.Get("starting_after") != want || q.Get("limit") != "2" || q.Get("status") != "succeeded" {
			t.Errorf("page %d query %v", i, q)
		}
	}
	// Breaking out early fetches no more pages.
	n := len(rc.requests)
	for pi, err := range c.AllPaymentIntents(context.Background(), &ListPaymentIntentsParams{Limit: 2}) {
		if err != nil || pi.ID != "pi_7" {
			t.Fatal(pi, err)
		}
		break
	}
	if len(rc.requests) != n+1 {
		t.Fatalf("fetched %d pages for one item", len(rc.requests)-n)
	}
}

func TestIteratorYieldsError(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			fmt.Fprintf(w, `{"object":"list","data":[%s],"has_more":true}`, intentJSON)
			return
		}
		writeError(w, 400, TypeInvalidRequest, "parameter_invalid", "starting_after")
	}}
	c, _ := testClient(t, rc)
	var items, errs int
	for _, err := range c.AllPaymentIntents(context.Background(), nil) {
		if err != nil {
			errs++
			if ErrorCode(err) != "parameter_invalid" {
				t.Fatal(err)
			}
			continue
		}
		items++
	}
	if items != 1 || errs != 1 {
		t.Fatalf("items %d errors %d", items, errs)
	}
}

func TestNullable(t *testing.T) {
	for _, tc := range []struct {
		in   UpdateSettingsRequest
		want string
	}{
		{UpdateSettingsRequest{}, `{}`},
		{UpdateSettingsRequest{ApprovalThresholdMinor: Null[int64]()}, `{"approval_threshold_minor":null}`},
		{UpdateSettingsRequest{ApprovalThresholdMinor: Value[int64](0)}, `{"approval_threshold_minor":0}`},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Errorf("got %s %v, want %s", b, err, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c := New("k", WithBackoff(100*time.Millisecond, 400*time.Millisecond))
	for attempt, hi := range []time.Duration{100, 200, 400, 400, 400} {
		hi *= time.Millisecond
		for range 50 {
			d := c.backoff(attempt)
			if d < hi/2 || d > hi {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, hi/2, hi)
			}
		}
	}
}

func TestEventStream(t *testing.T) {
	rc := &recorder{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": ping\n\nid: evt_1\nevent: payment_intent.succeeded\ndata: {\"id\":\"evt_1\",\"object\":\"event\",\"type\":\"payment_intent.succeeded\",\"created_at\":\"2026-11-21T21:03:34Z\",\"livemode\":false,\"data\":{\"id\":\"pi_1\",\"object\":{}}}\n\n")
	}}
	c, _ := testClient(t, rc)
	s, err := c.StreamEvents(context.Background(), &StreamEventsParams{Types: "payment_intent.succeeded"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := s.Next()
	if err != nil || ev.ID != "evt_1" || ev.Type != EventTypePaymentIntentSucceeded || ev.Data.ID != "pi_1" || s.LastID != "evt_1" {
		t.Fatalf("%+v %v", ev, err)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	if rc.requests[0].URL.Query().Get("types") != "payment_intent.succeeded" {
		t.Fatal(rc.requests[0].URL)
	}
}
