package terminals_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/cardgateway"
	"github.com/payd/payd/internal/terminals/simulator"
)

const liveBDK = "8C1F2E3D4C5B6A798877665544332211"

// TestLiveKeyFile starts payd with a PAYD_P2PE_KEYS file: the live key is
// loaded (a live payment gets as far as the gateway, which a merchant without
// a live wallet_a connection does not have: 503, nothing written) and appears in no log line; a malformed
// file stops the start with an error that does not repeat it.
func TestLiveKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p2pe.json")
	if err := os.WriteFile(path, []byte(`{"mobile":"`+liveBDK+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := apptest.Start(t, storetest.SQLite, func(c *app.Config) { c.P2PEKeys = path })
	h := newHarness(t, e)
	ctx := context.Background()
	ms := e.Main.Merchants
	if err := ms.SetKYC(ctx, e.Merchant.MerchantID, "approved"); err != nil {
		t.Fatal(err)
	}
	// A live provider but not the card acquirer (wallet_a): no live card gateway.
	if err := ms.ConnectProvider(ctx, e.Merchant.MerchantID, "bank_a", merchants.ProviderConfig{BaseURL: "http://127.0.0.1:1/x", APIKey: "k", CallbackSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	live, err := ms.CreateKey(ctx, e.Merchant.MerchantID, true, "secret")
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, body any, status int) map[string]any {
		r := h.do(t, apptest.Request{Method: method, Path: path, Key: live.Secret, Body: body, Headers: map[string]string{"Idempotency-Key": newKey()}})
		if r.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r.Map(t)
	}
	for _, model := range terminals.Models {
		id := do("POST", "/v1/terminals", map[string]any{"serial_number": "LIVE-" + string(model), "model": string(model)}, 201)["id"].(string)
		// A live terminal is activated with its device's KSN, never without.
		r := h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/activate", Key: live.Secret})
		requireError(t, r, 400, "parameter_missing", "ksn")
		initial, err := simulator.InitialKSN(model, id)
		if err != nil {
			t.Fatal(err)
		}
		do("POST", "/v1/terminals/"+id+"/activate", map[string]any{"ksn": initial.String()}, 200)
		dev, err := simulator.NewDevice(model, id, 1)
		if err != nil {
			t.Fatal(err)
		}
		body := h.payment(t, dev, cardgateway.CardApproved, 500, readOpts{})
		want := map[terminals.Model]string{terminals.Countertop: "p2pe_keys_unavailable", terminals.Mobile: "card_gateway_unavailable"}[model]
		h.requireNothingWritten(t, id, func() {
			r := h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/payments", Key: live.Secret, Body: body,
				Headers: map[string]string{"Idempotency-Key": newKey()}})
			requireError(t, r, 503, want, "")
		})
	}
	logs := strings.ToUpper(e.Logs.String())
	if !strings.Contains(logs, "P2PE LIVE KEYS LOADED") {
		t.Fatal("the key file load is not logged")
	}
	if strings.Contains(logs, liveBDK[:12]) {
		t.Fatal("the live BDK appears in the logs")
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"countertop":"`+liveBDK+`FF"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.Main.Config
	cfg.Addr, cfg.P2PEKeys = "127.0.0.1:0", bad
	m := &app.Main{Config: cfg, Out: io.Discard, Logger: app.NewLogger(io.Discard, "error")}
	err = m.Run(ctx)
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "P2PE key file") || strings.Contains(strings.ToUpper(err.Error()), liveBDK[:12]) {
		t.Fatalf("start with a malformed key file: %v", err)
	}
}
