package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/tracing"
)

// errNoAnswer is a call whose answer did not come within the connection's
// timeout: its outcome is unknown.
var errNoAnswer = errors.New("live: the provider did not answer in time")

// retryWaits are the pauses before the second and third attempt of a call
// that got a 5xx, could not connect, or was told its idempotency key is in
// use (409 idempotency_key_in_use: the first request under the key, from a
// payd process that died or gave up waiting, still runs at the provider and
// will answer a repeat with its own answer once it ends). Every call carries
// its idempotency key (GETs change nothing), so a repeat cannot act twice.
var retryWaits = []time.Duration{50 * time.Millisecond, 150 * time.Millisecond}

// maxAnswer bounds a provider's answer (a day's settlement report included).
const maxAnswer = 32 << 20

// client makes one merchant's calls to one provider.
type client struct {
	c          *Connections
	merchantID string
	provider   string
	conn       Connection
	rail       *rail
	br         *breaker
}

// client returns the caller of a merchant's provider.
func (c *Connections) client(ctx context.Context, merchantID, provider string) (*client, error) {
	conn, err := c.connection(ctx, nil, merchantID, provider)
	if err != nil {
		return nil, err
	}
	return c.clientOf(conn, merchantID, provider), nil
}

// clientOf returns the caller of a merchant's provider over conn.
func (c *Connections) clientOf(conn Connection, merchantID, provider string) *client {
	return &client{c: c, merchantID: merchantID, provider: provider, conn: conn, rail: c.rail(provider), br: c.breaker(merchantID, provider)}
}

// request is one protocol call.
type request struct {
	op      string // initiate, otp, status, payout, payout_status, report, callback_secret
	method  string
	path    string // relative to the base URL, query included
	idemKey string // "" on GETs: a fresh one is sent
	body    any
}

// response is a provider's answer to a call (2xx or 4xx; anything else is
// an error of do).
type response struct {
	status int
	body   []byte
}

// decode reads a successful answer into v.
func (r response) decode(v any) error {
	if err := json.Unmarshal(r.body, v); err != nil {
		return fmt.Errorf("live: the provider's answer is not the protocol's JSON: %w", err)
	}
	return nil
}

// errorCode returns the error.code of a 4xx answer.
func (r response) errorBody() protocol.ErrorDetail {
	var b protocol.ErrorBody
	json.Unmarshal(r.body, &b)
	return b.Error
}

// keyInUse reports a 409 idempotency_key_in_use: the first request under
// the call's key still runs at the provider.
func (r response) keyInUse() bool {
	return r.status == http.StatusConflict && r.errorBody().Code == "idempotency_key_in_use"
}

// do makes a call within the connection's timeout: a slot of the provider,
// the breaker's permission, the callback secret registered, then up to three
// attempts. It returns the answer for 2xx and 4xx (but 401 and 422), and an
// error otherwise: errNoAnswer for a timeout, 503 provider_unavailable
// without calling when the breaker is open or the slots stay taken, 502
// provider_error for the rest. No error message carries the API key, the
// callback secret, the base URL or the provider's body.
func (cl *client) do(ctx context.Context, req request) (response, error) {
	start := cl.c.cfg.Now()
	ctx, cancel := context.WithTimeout(ctx, cl.conn.Timeout)
	defer cancel()
	m := cl.c.metrics
	select {
	case cl.rail.slots <- struct{}{}:
	case <-ctx.Done():
		m.errors.WithLabelValues(cl.provider, "saturated").Inc()
		m.duration.WithLabelValues(cl.provider, req.op, "unavailable").Observe(time.Since(start).Seconds())
		return response{}, unavailable(cl.provider, "too many calls are in flight to it")
	}
	defer func() { <-cl.rail.slots }()
	ok, trial := cl.br.allow(cl.c.cfg.Now())
	if !ok {
		m.errors.WithLabelValues(cl.provider, "breaker_open").Inc()
		m.duration.WithLabelValues(cl.provider, req.op, "unavailable").Observe(time.Since(start).Seconds())
		return response{}, unavailable(cl.provider, "its circuit breaker is open after repeated failures")
	}
	g := m.inFlight.WithLabelValues(cl.provider)
	g.Inc()
	defer g.Dec()

	resp, kind, err := cl.registerSecret(ctx)
	if err == nil {
		resp, kind, err = cl.attempts(ctx, req)
	}
	cl.br.done(kind == "", trial, cl.c.cfg.Now())
	outcome := "ok"
	switch {
	case kind == "timeout":
		outcome = "timeout"
	case kind != "":
		outcome = "error"
	case resp.status >= 400:
		outcome = "refused"
	}
	m.duration.WithLabelValues(cl.provider, req.op, outcome).Observe(time.Since(start).Seconds())
	if kind != "" {
		m.errors.WithLabelValues(cl.provider, kind).Inc()
		cl.c.log.Warn("provider call failed", "provider", cl.provider, "merchant_id", cl.merchantID, "operation", req.op,
			"kind", kind, "status", resp.status, "code", resp.errorBody().Code)
	}
	return resp, err
}

// attempts sends req until it gets an answer that is not a 5xx and could
// connect, at most 1+len(retryWaits) times. kind is "" on an answer the
// breaker counts as a success, else the failure's kind.
func (cl *client) attempts(ctx context.Context, req request) (response, string, error) {
	var body []byte
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			return response{}, "", err
		}
	}
	key := req.idemKey
	if key == "" {
		key = req.op + ":" + ids.Secret("", 8)
	}
	for attempt := 0; ; attempt++ {
		resp, err := cl.send(ctx, req, key, body)
		kind := ""
		switch {
		case ctx.Err() != nil:
			return response{}, "timeout", errNoAnswer
		case err != nil:
			kind = "connection"
		case resp.status >= 500:
			kind = "server_error"
		case resp.status == http.StatusUnauthorized || resp.status == http.StatusForbidden:
			return resp, "auth", providerError(cl.provider, "the provider refused payd's credentials for this merchant (check the connection's api_key)", nil)
		case resp.status == http.StatusUnprocessableEntity:
			return resp, "protocol", providerError(cl.provider, "the provider refused a repeated idempotency key", nil)
		case resp.status >= 300 && resp.status < 400:
			return resp, "protocol", providerError(cl.provider, fmt.Sprintf("the provider answered %d", resp.status), nil)
		case resp.keyInUse():
			// Not a failure of the provider (the breaker does not count
			// it): wait for the first request under the key to end. If it
			// still runs after the last wait, the answer goes to the
			// adapter, which leaves the outcome unknown.
			if attempt >= len(retryWaits) {
				return resp, "", nil
			}
		default:
			return resp, "", nil
		}
		if kind != "" && (attempt >= len(retryWaits) || !retryable(err)) {
			msg := fmt.Sprintf("the provider answered %d", resp.status)
			if err != nil {
				msg = "the provider could not be reached (" + netReason(err) + ")"
			}
			return resp, kind, providerError(cl.provider, msg, err)
		}
		t := time.NewTimer(retryWaits[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
			return response{}, "timeout", errNoAnswer
		case <-t.C:
		}
	}
}

// send makes one HTTP request.
func (cl *client) send(ctx context.Context, req request, key string, body []byte) (response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The call's span: its operation, the provider and the merchant, never
	// the URL (a base URL may carry credentials) or the body.
	ctx, span := tracing.StartClient(ctx, "provider "+req.op)
	defer span.End()
	if span.Recording() {
		span.SetString("payd.provider", cl.provider)
		span.SetString("payd.provider.operation", req.op)
		span.SetString("payd.merchant_id", cl.merchantID)
		span.SetString("http.request.method", req.method)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, cl.conn.BaseURL+req.path, rd)
	if err != nil {
		return response{}, err
	}
	tracing.Inject(ctx, hr.Header)
	hr.Header.Set("Authorization", "Bearer "+cl.conn.APIKey)
	hr.Header.Set(protocol.HeaderIdempotencyKey, key)
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "payd")
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.rail.client.Do(hr)
	if err != nil {
		span.Fail("no answer from the provider")
		return response{}, err
	}
	span.SetInt("http.response.status_code", resp.StatusCode)
	if resp.StatusCode >= 500 {
		span.Fail("the provider answered " + strconv.Itoa(resp.StatusCode))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, body: raw}, nil
}

// retryable reports whether a failed attempt may be repeated: a 5xx answer
// (err nil) or a network error (the idempotency key makes a repeat safe even
// if the first attempt arrived).
func retryable(err error) bool {
	return err == nil || !errors.Is(err, context.Canceled)
}

// netReason names a network failure without the URL (which could hold
// credentials) or anything else of the request.
func netReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before the answer"
	case errors.As(err, &op) && op.Op == "dial":
		return "cannot connect"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "name not resolved"
	}
	return "network error"
}

// providerError is a 502 provider_error whose message names the provider and
// what went wrong, and nothing of the request.
func providerError(provider, msg string, cause error) *errs.Error {
	var safe error
	if cause != nil {
		safe = errors.New(netReason(cause))
	}
	return &errs.Error{Kind: errs.KindProvider, Code: "provider_error", Message: provider + ": " + msg, Err: safe}
}

// registerEvery is how often the callback secret is registered again (a
// provider that lost it, as a restarted simulator does, gets it back).
const registerEvery = 10 * time.Minute

// registerSecret tells the provider the callback secret before the first
// other call of a process, and again every registerEvery. A provider that issues its own
// secret answers 404 or 405; that is fine.
func (cl *client) registerSecret(ctx context.Context) (response, string, error) {
	fp := cl.merchantID + "/" + cl.provider + "/" + secretFingerprint(cl.conn.CallbackSecret)
	cl.c.mu.Lock()
	at, done := cl.c.registered[fp]
	cl.c.mu.Unlock()
	if done && cl.c.cfg.Now().Sub(at) < registerEvery || cl.conn.CallbackSecret == "" {
		return response{}, "", nil
	}
	resp, kind, err := cl.attempts(ctx, request{op: "callback_secret", method: http.MethodPut, path: "/v1/callback_secret",
		idemKey: "callback-secret:" + secretFingerprint(cl.conn.CallbackSecret),
		body:    protocol.CallbackSecretRequest{Secret: cl.conn.CallbackSecret}})
	if err != nil {
		return resp, kind, err
	}
	if resp.status >= 400 && resp.status != http.StatusNotFound && resp.status != http.StatusMethodNotAllowed {
		return resp, "protocol", providerError(cl.provider, fmt.Sprintf("the provider refused the callback secret (%d %s)", resp.status, resp.errorBody().Code), nil)
	}
	cl.c.mu.Lock()
	cl.c.registered[fp] = cl.c.cfg.Now()
	cl.c.mu.Unlock()
	return resp, "", nil
}

// providerTimeout is a 504 provider_timeout for a call whose answer did not
// come in time and that payd does not leave pending (a report).
func providerTimeout(provider string) *errs.Error {
	return &errs.Error{Kind: errs.KindProviderTimeout, Code: "provider_timeout", Message: provider + ": the provider did not answer in time"}
}
