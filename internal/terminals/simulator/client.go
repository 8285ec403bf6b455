package simulator

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/terminals"
)

// Client posts simulated card-present payments to a payd server.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8080
	APIKey  string // a test secret key
	HTTP    *http.Client
	State   State
}

// Payment is one simulated card tap or insert.
type Payment struct {
	TerminalID  string
	PAN         string
	AmountMinor int64
	Currency    string      // default DJF
	Expiry      card.Expiry // default: December, three years ahead
	// Counter forces the device's transaction counter; 0 takes the next one
	// from State.
	Counter uint32
	// IdempotencyKey defaults to a fresh random key.
	IdempotencyKey string
}

// Result is the server's answer.
type Result struct {
	HTTPStatus int
	Body       []byte // the response body, as sent
	// Succeeded is true when the answer is 201 with a succeeded intent.
	Succeeded bool
	// Status is the intent's status, or "" when the answer was an error.
	Status string
	KSN    string
}

// ChipRead builds the chip read a device would produce for a payment:
// track 2 equivalent, PAN, expiry, a random ARQC, amount and currency.
func ChipRead(p Payment) ([]byte, error) {
	currency := p.Currency
	if currency == "" {
		currency = "DJF"
	}
	num, err := money.Numeric(currency)
	if err != nil {
		return nil, fmt.Errorf("currency %q: %w", currency, err)
	}
	exp := p.Expiry
	if exp.Year == 0 {
		exp = card.Expiry{Year: time.Now().UTC().Year() + 3, Month: time.December}
	}
	arqc := make([]byte, 8)
	if _, err := rand.Read(arqc); err != nil {
		return nil, err
	}
	return card.EncodeChipRead(p.PAN, exp.Year, exp.Month, arqc, p.AmountMinor, num)
}

// Pay reads the terminal's model from the server, encrypts a chip read as
// the terminal's device would with its next KSN, and posts it.
func (c *Client) Pay(ctx context.Context, p Payment) (Result, error) {
	if p.Currency == "" {
		p.Currency = "DJF"
	}
	model, err := c.terminalModel(ctx, p.TerminalID)
	if err != nil {
		return Result{}, err
	}
	read, err := ChipRead(p)
	if err != nil {
		return Result{}, err
	}
	ksn, payload, err := c.encrypt(model, p, read)
	clear(read)
	if err != nil {
		return Result{}, err
	}
	key := p.IdempotencyKey
	if key == "" {
		b := make([]byte, 16)
		rand.Read(b)
		key = "sim_" + hex.EncodeToString(b)
	}
	body, _ := json.Marshal(map[string]any{"amount_minor": p.AmountMinor, "currency": p.Currency, "ksn": ksn, "encrypted_payload": payload})
	status, respBody, err := c.do(ctx, http.MethodPost, "/v1/terminals/"+p.TerminalID+"/payments", body, key)
	if err != nil {
		return Result{}, err
	}
	res := Result{HTTPStatus: status, Body: respBody, KSN: ksn}
	if status == http.StatusCreated || status == http.StatusPaymentRequired {
		var pi struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(respBody, &pi); err != nil {
			return res, fmt.Errorf("the server answered %d with a body that is not an intent", status)
		}
		res.Status = pi.Status
		res.Succeeded = status == http.StatusCreated && pi.Status == "succeeded"
	}
	return res, nil
}

// encrypt runs the device's next transaction, moving the stored counter on
// before the payment is posted (a device never reuses a KSN, whatever
// becomes of the request).
func (c *Client) encrypt(model terminals.Model, p Payment, read []byte) (string, string, error) {
	unlock, err := c.State.Lock(p.TerminalID)
	if err != nil {
		return "", "", err
	}
	defer unlock()
	counter := p.Counter
	if counter == 0 {
		if counter, err = c.State.Next(p.TerminalID); err != nil {
			return "", "", err
		}
	}
	dev, err := NewDevice(model, p.TerminalID, counter)
	if err != nil {
		return "", "", err
	}
	ksn, payload, err := dev.Encrypt(read)
	if err != nil {
		return "", "", err
	}
	if err := c.State.Save(p.TerminalID, dev.NextCounter()); err != nil {
		return "", "", err
	}
	return ksn, payload, nil
}

// terminalModel GETs the terminal to learn its model.
func (c *Client) terminalModel(ctx context.Context, id string) (terminals.Model, error) {
	status, body, err := c.do(ctx, http.MethodGet, "/v1/terminals/"+id, nil, "")
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("GET /v1/terminals/%s answered %d: %s", id, status, errorMessage(body))
	}
	var t struct {
		Model terminals.Model `json:"model"`
	}
	if err := json.Unmarshal(body, &t); err != nil {
		return "", fmt.Errorf("GET /v1/terminals/%s: %w", id, err)
	}
	if _, ok := t.Model.Algorithm(); !ok {
		return "", fmt.Errorf("terminal %s has model %q, which the simulator cannot encrypt for", id, t.Model)
	}
	return t.Model, nil
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, idemKey string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, out, err
}

// errorMessage returns error.message of an error body, or the body.
func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Code + ": " + e.Error.Message
	}
	if len(body) > 200 {
		body = body[:200]
	}
	return string(body)
}

// ErrorMessage returns "code: message" of an error response body.
func ErrorMessage(body []byte) string { return errorMessage(body) }
