package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

const gwPAN = "4242424242424242"

func cardRequest(ref, pan string, capture bool) protocol.CardAuthorizationRequest {
	return protocol.CardAuthorizationRequest{Reference: ref, AmountMinor: 800, Currency: "DJF", Capture: capture, EntryMode: "chip",
		TerminalID: "term_1", Card: protocol.Card{Number: pan, ExpMonth: 6, ExpYear: time.Now().Year() + 1, Cryptogram: "A1B2C3D4E5F60718"}}
}

// simGateway starts a simulator and the merchant's card gateway on its
// wallet_a rail.
func simGateway(t *testing.T, cfg sim.Config, timeout time.Duration, logs *bytes.Buffer) (*sim.Server, *CardGateway) {
	t.Helper()
	srv, err := sim.Serve("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	c, _ := newConnections(t, srv.URL+"/wallet_a", timeout, nil, logs)
	gw, err := c.CardGateway(context.Background(), "mer_1")
	if err != nil {
		t.Fatal(err)
	}
	return srv, gw
}

// TestCardGatewayCalls: authorise (a repeat never authorises twice), look
// up by reference, capture and void, against the simulator.
func TestCardGatewayCalls(t *testing.T) {
	ctx := context.Background()
	srv, gw := simGateway(t, sim.Config{}, 5*time.Second, nil)
	a, err := gw.Authorize(ctx, cardRequest("tpay_a", gwPAN, true))
	if err != nil || a.Status != protocol.AuthorizationCaptured || a.AuthCode == "" || a.Card.Last4 != "4242" {
		t.Fatalf("authorise: %+v %v", a, err)
	}
	again, err := gw.Authorize(ctx, cardRequest("tpay_a", gwPAN, true))
	if err != nil || again.ID != a.ID || again.AuthCode != a.AuthCode || srv.CardAuthorizations(testKey) != 1 {
		t.Fatalf("repeat: %+v %v (%d authorisations)", again, err, srv.CardAuthorizations(testKey))
	}
	found, ok, err := gw.LookupAuthorization(ctx, "tpay_a")
	if err != nil || !ok || found.ID != a.ID {
		t.Fatalf("lookup: %+v %v %v", found, ok, err)
	}
	if _, ok, err := gw.LookupAuthorization(ctx, "tpay_never"); err != nil || ok {
		t.Fatalf("lookup of nothing: %v %v", ok, err)
	}
	d, err := gw.Authorize(ctx, cardRequest("tpay_d", "4000000000000002", true))
	if err != nil || d.Status != protocol.AuthorizationDeclined || d.Failure.DeclineCode != "generic_decline" {
		t.Fatalf("decline: %+v %v", d, err)
	}

	if _, err := gw.Authorize(ctx, cardRequest("tpay_m", gwPAN, false)); err != nil {
		t.Fatal(err)
	}
	c, err := gw.Capture(ctx, "tpay_m", 500)
	if err != nil || c.Status != protocol.AuthorizationCaptured || c.CapturedMinor != 500 {
		t.Fatalf("capture: %+v %v", c, err)
	}
	if c2, err := gw.Capture(ctx, "tpay_m", 500); err != nil || c2.CapturedMinor != 500 {
		t.Fatalf("capture repeated under its key: %+v %v", c2, err)
	}
	if _, err := gw.Void(ctx, "tpay_m"); errs.As(err) == nil || errs.As(err).Kind != errs.KindProvider {
		t.Fatalf("void of a captured authorisation: %v", err)
	}
	if _, err := gw.Authorize(ctx, cardRequest("tpay_v", gwPAN, false)); err != nil {
		t.Fatal(err)
	}
	if v, err := gw.Void(ctx, "tpay_v"); err != nil || v.Status != protocol.AuthorizationVoided {
		t.Fatalf("void: %+v %v", v, err)
	}
}

// TestCardGatewayTimeout: a gateway that authorises and then hangs is an
// unknown outcome (504 wrapping ErrCardOutcomeUnknown), which the status
// query then resolves; nothing was authorised twice.
func TestCardGatewayTimeout(t *testing.T) {
	ctx := context.Background()
	srv, gw := simGateway(t, sim.Config{TimeoutRate: 1, HangFor: 10 * time.Second}, 300*time.Millisecond, nil)
	_, err := gw.Authorize(ctx, cardRequest("tpay_t", gwPAN, true))
	if !errors.Is(err, ErrCardOutcomeUnknown) || errs.As(err) == nil || errs.As(err).Code != "provider_timeout" {
		t.Fatalf("timeout: %v", err)
	}
	a, ok, err := gw.LookupAuthorization(ctx, "tpay_t")
	if err != nil || !ok || a.Status != protocol.AuthorizationCaptured {
		t.Fatalf("lookup after the timeout: %+v %v %v", a, ok, err)
	}
	if n := srv.CardAuthorizations(testKey); n != 1 {
		t.Fatalf("%d authorisations", n)
	}
}

// TestCardDataNeverLeaks: a failing gateway's errors and payd's log lines
// carry no card data, and the request prints redacted however it is printed.
func TestCardDataNeverLeaks(t *testing.T) {
	logs := &bytes.Buffer{}
	_, gw := simGateway(t, sim.Config{ErrorRate: 1}, 2*time.Second, logs)
	req := cardRequest("tpay_e", gwPAN, true)
	_, err := gw.Authorize(context.Background(), req)
	if errs.As(err) == nil || errs.As(err).Code != "provider_error" {
		t.Fatalf("gateway failing: %v", err)
	}
	slog.New(slog.NewJSONHandler(logs, nil)).Info("request", "req", req, "card", req.Card)
	printed := fmt.Sprintf("%v %+v %#v %s %v", req, req, req, req.Card, req.Card)
	for _, s := range []string{err.Error(), errs.As(err).Message, logs.String(), printed} {
		if strings.Contains(s, gwPAN) || strings.Contains(s, "424242") || strings.Contains(s, req.Card.Cryptogram) {
			t.Fatalf("card data leaked: %s", s)
		}
	}
}
