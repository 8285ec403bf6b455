package cardgateway

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers/live"
	"github.com/payd/payd/internal/terminals"
)

func read(t *testing.T, pan string) card.Read {
	t.Helper()
	raw, err := card.EncodeChipRead(pan, 2030, time.May, make([]byte, 8), 500, "262")
	if err != nil {
		t.Fatal(err)
	}
	r, err := card.FromTLV(raw)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSandboxDecidesByCard(t *testing.T) {
	code := regexp.MustCompile(`^[A-Z2-7]{6}$`)
	gw, err := Select(context.Background(), "mer_1", false)
	if err != nil {
		t.Fatal(err)
	}
	for pan, approved := range map[string]bool{CardApproved: true, Card3DS: true, "5555555555554444": true, CardDeclined: false} {
		req := terminals.AuthorizationRequest{Reference: "tpay_1", Card: read(t, pan), AmountMinor: 500, Currency: "DJF"}
		a, err := gw.Authorize(context.Background(), req)
		if err != nil || a.Approved != approved {
			t.Fatalf("%s: %+v %v", pan[len(pan)-4:], a, err)
		}
		if approved && !code.MatchString(a.AuthCode) {
			t.Fatalf("auth code %q", a.AuthCode)
		}
		if !approved && (a.DeclineCode != DeclineGeneric || a.AuthCode != "") {
			t.Fatalf("decline %+v", a)
		}
	}
	a1, _ := gw.Authorize(context.Background(), terminals.AuthorizationRequest{Reference: "tpay_1", Card: read(t, CardApproved)})
	a2, _ := gw.Authorize(context.Background(), terminals.AuthorizationRequest{Reference: "tpay_1", Card: read(t, CardApproved)})
	a3, _ := gw.Authorize(context.Background(), terminals.AuthorizationRequest{Reference: "tpay_2", Card: read(t, CardApproved)})
	if a1.AuthCode != a2.AuthCode || a1.AuthCode == a3.AuthCode {
		t.Fatalf("auth codes by reference: %s %s %s", a1.AuthCode, a2.AuthCode, a3.AuthCode)
	}
}

// TestLiveWithoutConnectionHasNoGateway: live mode with no live card
// gateway connection is 503 card_gateway_unavailable, whether the
// deployment has no live side or the merchant has no wallet_a connection.
func TestLiveWithoutConnectionHasNoGateway(t *testing.T) {
	if _, err := Select(context.Background(), "mer_1", true); !errs.IsCode(err, "card_gateway_unavailable") {
		t.Fatalf("live: %v", err)
	}
	notConnected := Selector{Live: func(context.Context, string) (*live.CardGateway, error) {
		return nil, &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable", Message: "not connected",
			Err: errs.NotFound("provider_connection", "wallet_a")}
	}}
	if _, err := notConnected.Select(context.Background(), "mer_1", true); !errs.IsCode(err, "card_gateway_unavailable") {
		t.Fatalf("live without a wallet_a connection: %v", err)
	}
	breakerOpen := Selector{Live: func(context.Context, string) (*live.CardGateway, error) {
		return nil, &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable", Message: "breaker open"}
	}}
	if _, err := breakerOpen.Select(context.Background(), "mer_1", true); !errs.IsCode(err, "provider_unavailable") {
		t.Fatalf("live with the breaker open: %v", err)
	}
	if gw, err := Select(context.Background(), "mer_1", false); err != nil || gw.(terminals.InProcess).InProcess() != true {
		t.Fatalf("test mode: %v %v", gw, err)
	}
}
