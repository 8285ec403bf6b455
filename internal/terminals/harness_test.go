package terminals_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/simulator"
)

// harness drives one running payd and remembers every response body and
// every piece of card data the tests put into a payload, for the test that
// searches logs, tables and bodies for them.
type harness struct {
	t *testing.T
	e *apptest.Env
	// svc is the running terminals service; recorder the payments service it
	// records intents through.
	svc      *terminals.Service
	recorder terminals.IntentRecorder

	mu      sync.Mutex
	bodies  [][]byte
	secrets []string // PANs, track 2 (hex and ASCII), cryptograms (hex)
	secretB [][]byte // the same as raw bytes
}

func newHarness(t *testing.T, e *apptest.Env) *harness {
	h := &harness{t: t, e: e, svc: e.Main.Terminals()}
	if h.svc == nil {
		t.Fatal("the terminals service is not wired")
	}
	if h.recorder = h.svc.Recorder(); h.recorder != e.Main.PaymentIntents() {
		t.Fatal("the terminals service does not record through the payments service")
	}
	return h
}

// do sends a request (checked against the OpenAPI document) and keeps its body.
func (h *harness) do(t *testing.T, req apptest.Request) *apptest.Response {
	t.Helper()
	if req.Key == "" {
		req.Key = h.e.SK
	}
	r := h.e.Do(req)
	h.keep(r.Body)
	return r
}

func (h *harness) keep(b []byte) {
	h.mu.Lock()
	h.bodies = append(h.bodies, append([]byte(nil), b...))
	h.mu.Unlock()
}

func (h *harness) post(t *testing.T, path string, body any) *apptest.Response {
	t.Helper()
	return h.do(t, apptest.Request{Method: "POST", Path: path, Body: body, Headers: map[string]string{"Idempotency-Key": newKey()}})
}

func (h *harness) get(t *testing.T, path string) *apptest.Response {
	t.Helper()
	return h.do(t, apptest.Request{Method: "GET", Path: path})
}

// register registers a terminal and fails the test unless it is 201.
func (h *harness) register(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := h.post(t, "/v1/terminals", body)
	if r.Status != 201 {
		t.Fatalf("register %v: %d %s", body, r.Status, r.Body)
	}
	return r.Map(t)
}

// activeTerminal registers and activates a terminal of the model.
func (h *harness) activeTerminal(t *testing.T, model terminals.Model) string {
	t.Helper()
	term := h.register(t, map[string]any{"serial_number": "SN-" + newKey(), "model": string(model), "outlet_id": "outlet_main"})
	id := term["id"].(string)
	if r := h.post(t, "/v1/terminals/"+id+"/activate", nil); r.Status != 200 || r.Map(t)["status"] != "active" {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	return id
}

// device returns the simulated device of a terminal at a counter.
func (h *harness) device(t *testing.T, model terminals.Model, termID string, counter uint32) *simulator.Device {
	t.Helper()
	d, err := simulator.NewDevice(model, termID, counter)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type readOpts struct {
	currency string
	expiry   card.Expiry
	// chipAmount, when non-zero, is the amount the card authorises, if it
	// differs from the request's.
	chipAmount int64
}

// chipRead builds a chip read and remembers its card data.
func (h *harness) chipRead(t *testing.T, pan string, amount int64, o readOpts) []byte {
	t.Helper()
	if o.currency == "" {
		o.currency = "DJF"
	}
	if o.expiry.Year == 0 {
		o.expiry = card.Expiry{Year: time.Now().Year() + 2, Month: time.June}
	}
	if o.chipAmount != 0 {
		amount = o.chipAmount
	}
	num, err := money.Numeric(o.currency)
	if err != nil {
		t.Fatal(err)
	}
	arqc := make([]byte, 8)
	rand.Read(arqc)
	read, err := card.EncodeChipRead(pan, o.expiry.Year, o.expiry.Month, arqc, amount, num)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := card.FromTLV(read)
	if err != nil {
		t.Fatal(err)
	}
	h.remember(pan, parsed.Track2(), arqc)
	return read
}

func (h *harness) remember(pan string, track2, cryptogram []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t2 := strings.ToUpper(hex.EncodeToString(track2))
	ascii := strings.Replace(strings.TrimRight(t2, "F"), "D", "=", 1)
	h.secrets = append(h.secrets, pan, hex.EncodeToString([]byte(pan)), t2, strings.ToLower(t2), ascii,
		strings.Replace(ascii, "=", "D", 1), strings.ToUpper(hex.EncodeToString(cryptogram)), hex.EncodeToString(cryptogram))
	h.secretB = append(h.secretB, []byte(pan), track2, cryptogram)
}

// payment encrypts a chip read on the device and returns the request body.
func (h *harness) payment(t *testing.T, dev *simulator.Device, pan string, amount int64, o readOpts) map[string]any {
	t.Helper()
	ksn, payload, err := dev.Encrypt(h.chipRead(t, pan, amount, o))
	if err != nil {
		t.Fatal(err)
	}
	currency := o.currency
	if currency == "" {
		currency = "DJF"
	}
	return map[string]any{"amount_minor": amount, "currency": currency, "ksn": ksn, "encrypted_payload": payload}
}

// pay posts a payment body with a fresh Idempotency-Key.
func (h *harness) pay(t *testing.T, termID string, body map[string]any) *apptest.Response {
	t.Helper()
	return h.post(t, "/v1/terminals/"+termID+"/payments", body)
}

// written is what a card-present request can write: the terminal's KSN state,
// its terminal payments and the recorded intents.
type written struct {
	counter  int64
	keyID    string
	payments int
	intents  int
}

func (h *harness) written(t *testing.T, termID string) written {
	t.Helper()
	var w written
	var keyID *string
	ctx := context.Background()
	db := h.e.Main.DB
	if err := db.QueryRow(ctx, "SELECT ksn_counter, ksn_key_id FROM terminals WHERE id = ?", termID).Scan(&w.counter, &keyID); err != nil {
		t.Fatal(err)
	}
	if keyID != nil {
		w.keyID = *keyID
	}
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM terminal_payments WHERE terminal_id = ?", termID).Scan(&w.payments); err != nil {
		t.Fatal(err)
	}
	w.intents = h.intentCount(t)
	return w
}

// intentCount counts the payment intents of every merchant and mode.
func (h *harness) intentCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := h.e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM payment_intents").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// requireNothingWritten runs fn and checks it wrote nothing.
func (h *harness) requireNothingWritten(t *testing.T, termID string, fn func()) {
	t.Helper()
	before := h.written(t, termID)
	fn()
	if after := h.written(t, termID); after != before {
		t.Fatalf("a refused request wrote: before %+v, after %+v", before, after)
	}
}

// requireError checks an error answer's status, code and param.
func requireError(t *testing.T, r *apptest.Response, status int, code, param string) {
	t.Helper()
	var b struct {
		Error struct {
			Code, Param, Message string
		} `json:"error"`
	}
	r.JSON(t, &b)
	if r.Status != status || b.Error.Code != code || b.Error.Param != param {
		t.Fatalf("got %d %s, want %d %s param %q", r.Status, r.Body, status, code, param)
	}
	if b.Error.Message == "" {
		t.Fatal("error without a message")
	}
}

var keyCounter struct {
	sync.Mutex
	n int
}

func newKey() string {
	keyCounter.Lock()
	defer keyCounter.Unlock()
	keyCounter.n++
	return fmt.Sprintf("k%d-%d", time.Now().UnixNano(), keyCounter.n)
}

// containsAny reports the first secret found in text or raw.
func (h *harness) find(text string, raw []byte) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.secrets {
		if s != "" && strings.Contains(text, s) {
			return s, true
		}
	}
	for _, b := range h.secretB {
		if len(b) > 0 && raw != nil && bytes.Contains(raw, b) {
			return hex.EncodeToString(b), true
		}
	}
	return "", false
}
