// Package client is payd's Go SDK: a typed client for every operation of the
// payd API (api/openapi.yaml), with automatic idempotency keys, retries with
// exponential backoff and jitter, list iterators over cursors, and the
// webhook signature verifier.
//
//	c := client.New(os.Getenv("PAYD_API_KEY"), client.WithBaseURL("http://127.0.0.1:8080"))
//	pi, err := c.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{
//		Amount: client.Int64(1500), Currency: "DJF", Provider: "bank_a",
//		CustomerMSISDN: client.String("+25377123456"),
//	})
//
// Every method takes a context and returns an *Error (use errors.As) when the
// API answers with an error. The types and methods in *_gen.go are generated
// from the OpenAPI document by internal/sdkgen (go generate ./client); the
// transport, retries, errors and pagination here are written by hand.
package client

//go:generate go run ../internal/sdkgen/cmd/sdkgen -root ..

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

// DefaultBaseURL is where `payd serve` listens by default.
const DefaultBaseURL = "http://127.0.0.1:8080"

// Defaults of the retry policy.
const (
	DefaultMaxRetries   = 3
	DefaultMinBackoff   = 250 * time.Millisecond
	DefaultMaxBackoff   = 8 * time.Second
	DefaultMaxRetryWait = 30 * time.Second
	// maxResponseBytes bounds what the client reads of one answer.
	maxResponseBytes = 64 << 20
)

// Client sends requests to one payd with one API key. It is safe for
// concurrent use.
type Client struct {
	key          string
	baseURL      string
	http         *http.Client
	userAgent    string
	maxRetries   int
	minBackoff   time.Duration
	maxBackoff   time.Duration
	maxRetryWait time.Duration
	sleep        func(context.Context, time.Duration) error
	newKey       func() string
}

// Option configures a Client.
type Option func(*Client)

// WithBaseURL sets the API's base URL (default DefaultBaseURL).
func WithBaseURL(u string) Option {
	return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") }
}

// WithHTTPClient sets the http.Client requests go through (default: one
// with a 60-second timeout per attempt).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithMaxRetries sets how many times one call is retried (default 3; 0
// turns retries off).
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = max(n, 0) } }

// WithBackoff sets the first and the largest wait between retries.
// Waits double from min up to max and are jittered (a random point in the
// upper half of the wait), so many clients do not retry in step.
func WithBackoff(min, max time.Duration) Option {
	return func(c *Client) { c.minBackoff, c.maxBackoff = min, max }
}

// WithMaxRetryWait sets the longest Retry-After the client waits for; a 429
// asking for longer is returned to the caller at once (default 30s).
func WithMaxRetryWait(d time.Duration) Option { return func(c *Client) { c.maxRetryWait = d } }

// WithUserAgent prepends an application's name to the User-Agent header
// (e.g. "shop/1.2").
func WithUserAgent(app string) Option {
	return func(c *Client) { c.userAgent = app + " " + c.userAgent }
}

// New returns a client for key: a secret key (sk_test_..., sk_live_...) or a
// publishable key (pk_..., which the API accepts only on
// ConfirmPaymentIntent).
func New(key string, opts ...Option) *Client {
	c := &Client{
		key:          key,
		baseURL:      DefaultBaseURL,
		http:         &http.Client{Timeout: 60 * time.Second},
		userAgent:    "payd-go/" + Version + " (" + runtime.Version() + ")",
		maxRetries:   DefaultMaxRetries,
		minBackoff:   DefaultMinBackoff,
		maxBackoff:   DefaultMaxBackoff,
		maxRetryWait: DefaultMaxRetryWait,
		sleep:        sleepContext,
		newKey:       func() string { return "payd-go-" + uuid.NewString() },
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Livemode reports whether the client's key is a live key.
func (c *Client) Livemode() bool {
	return strings.HasPrefix(c.key, "sk_live_") || strings.HasPrefix(c.key, "pk_live_")
}

// RequestOption adjusts one call.
type RequestOption func(*callOptions)

type callOptions struct {
	idempotencyKey string
	header         http.Header
	response       *Response
}

// WithIdempotencyKey sends key as the call's Idempotency-Key instead of a
// generated one: use your own order or payout reference so a retry after a
// crash of your process cannot act twice.
func WithIdempotencyKey(key string) RequestOption {
	return func(o *callOptions) { o.idempotencyKey = key }
}

// WithHeader adds a request header (e.g. X-Service-Scenario in test mode).
func WithHeader(name, value string) RequestOption {
	return func(o *callOptions) {
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Add(name, value)
	}
}

// WithScenario picks a sandbox scenario for a test-mode payment intent
// (the X-Service-Scenario header).
func WithScenario(s SandboxScenario) RequestOption {
	return WithHeader("X-Service-Scenario", string(s))
}

// Response describes the HTTP answer of a call.
type Response struct {
	StatusCode int
	Header     http.Header
	// RequestID is the answer's Request-Id header.
	RequestID string
	// IdempotentReplayed is true when payd replayed a stored answer.
	IdempotentReplayed bool
	// IdempotencyKey is the key the call sent ("" on GET and DELETE).
	IdempotencyKey string
	// Attempts is how many requests the call made (1 without retries).
	Attempts int
}

// WithResponse fills r with the call's HTTP answer once it returns.
func WithResponse(r *Response) RequestOption { return func(o *callOptions) { o.response = r } }

// statusDecoder is a result whose type depends on the answer's status.
type statusDecoder interface {
	decodeStatus(status int, body []byte) error
}

// call sends one logical call: marshals body once, generates its
// idempotency key once, and retries the same bytes under the same key.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any, alsoDecode []int, opts []RequestOption) error {
	resp, data, err := c.send(ctx, method, path, query, body, "", opts)
	if err != nil {
		var apiErr *Error
		if out != nil && errors.As(err, &apiErr) && containsInt(alsoDecode, apiErr.HTTPStatus) {
			if jerr := json.Unmarshal(apiErr.Body, out); jerr == nil {
				apiErr.decoded = true
			}
		}
		return err
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if sd, ok := out.(statusDecoder); ok {
		err = sd.decodeStatus(resp.StatusCode, data)
	} else {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return fmt.Errorf("payd: decode %s %s answer: %w", method, path, err)
	}
	return nil
}

// Raw sends a request with a body that is not JSON (CSV for bulk payouts,
// pacs.008 XML for bank transfers) and returns the raw answer's body,
// with the same idempotency keys, retries and errors as every other call.
func (c *Client) Raw(ctx context.Context, method, path, contentType string, body []byte, opts ...RequestOption) ([]byte, error) {
	_, data, err := c.send(ctx, method, path, nil, body, contentType, opts)
	return data, err
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, body any, contentType string, opts []RequestOption) (*http.Response, []byte, error) {
	resp, err := c.open(ctx, method, path, query, body, contentType, opts)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, nil, fmt.Errorf("payd: read %s %s answer: %w", method, path, err)
	}
	return resp, data, nil
}

// open sends the request, retrying as the policy allows, and returns a
// successful answer with its body unread.
func (c *Client) open(ctx context.Context, method, path string, query url.Values, body any, contentType string, opts []RequestOption) (*http.Response, error) {
	var co callOptions
	for _, o := range opts {
		o(&co)
	}
	var payload []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		payload = b
	default:
		if !isNil(body) {
			var err error
			if payload, err = json.Marshal(body); err != nil {
				return nil, fmt.Errorf("payd: encode %s %s: %w", method, path, err)
			}
			contentType = "application/json"
		}
	}
	if method == http.MethodPost && payload == nil {
		payload, contentType = []byte("{}"), "application/json"
	}
	idemKey := co.idempotencyKey
	if idemKey == "" && method == http.MethodPost {
		idemKey = c.newKey()
	}
	u := c.baseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(payload))
		if err != nil {
			return nil, fmt.Errorf("payd: %w", err)
		}
		if payload == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		req.Header.Set("User-Agent", c.userAgent)
		req.Header.Set("Accept", "application/json")
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		for k, vs := range co.header {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
		resp, err := c.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if attempt < c.maxRetries {
				if serr := c.sleep(ctx, c.backoff(attempt)); serr != nil {
					return nil, serr
				}
				continue
			}
			return nil, &NetworkError{Method: method, Path: path, Attempts: attempt + 1, Err: err}
		}
		if co.response != nil {
			*co.response = Response{StatusCode: resp.StatusCode, Header: resp.Header, RequestID: resp.Header.Get("Request-Id"),
				IdempotentReplayed: resp.Header.Get("Idempotent-Replayed") == "true", IdempotencyKey: idemKey, Attempts: attempt + 1}
		}
		if resp.StatusCode < 300 {
			return resp, nil
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		resp.Body.Close()
		apiErr := newError(resp, data)
		if wait, ok := c.retryWait(apiErr, resp.Header, attempt); ok {
			if serr := c.sleep(ctx, wait); serr != nil {
				return nil, serr
			}
			continue
		}
		return nil, apiErr
	}
}

// retryWait decides whether an error answer is retried and after how long:
// 429 and 503 database_unavailable (payd could not reach its database and
// did nothing) after Retry-After, and 409 idempotency_key_in_use (the first
// request with this key is still running); nothing else is, since the API
// has answered.
func (c *Client) retryWait(e *Error, h http.Header, attempt int) (time.Duration, bool) {
	if attempt >= c.maxRetries {
		return 0, false
	}
	switch {
	case e.HTTPStatus == http.StatusTooManyRequests,
		e.HTTPStatus == http.StatusServiceUnavailable && e.Code == CodeDatabaseUnavailable:
		if d, ok := parseRetryAfter(h.Get("Retry-After"), time.Now()); ok {
			if d > c.maxRetryWait {
				return 0, false
			}
			return d, true
		}
		return c.backoff(attempt), true
	case e.HTTPStatus == http.StatusConflict && e.Code == CodeIdempotencyKeyInUse:
		return c.backoff(attempt), true
	}
	return 0, false
}

// backoff is the wait before retry attempt+1: minBackoff doubled per
// attempt, capped at maxBackoff, and jittered to a random point in its upper
// half.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.minBackoff
	for i := 0; i < attempt && d < c.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.maxBackoff)
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// NetworkError is returned when no answer arrived after every retry.
type NetworkError struct {
	Method, Path string
	Attempts     int
	Err          error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("payd: %s %s: no answer after %d attempt(s): %v", e.Method, e.Path, e.Attempts, e.Err)
}

// Unwrap returns the last transport error.
func (e *NetworkError) Unwrap() error { return e.Err }

// Timeout reports whether the last failure was a timeout.
func (e *NetworkError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// String returns a pointer to s, for optional request fields.
func String(s string) *string { return &s }

// Int64 returns a pointer to n, for optional request fields.
func Int64(n int64) *int64 { return &n }

// Int returns a pointer to n, for optional request fields.
func Int(n int) *int { return &n }

// Bool returns a pointer to b, for optional request fields.
func Bool(b bool) *bool { return &b }
