package terminals_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

type (
	authPrincipal       = auth.Principal
	paymentsCardPresent = payments.CardPresent
	paymentsIntent      = payments.Intent
	storeClaim          = store.Claim
)

var errUnavailable = &errs.Error{Kind: errs.KindUnavailable, Code: "card_present_unavailable", Message: "test outage", Err: errors.New("outage")}

// cardPresent is payment_method_details of a card-present intent.
type cardPresent struct {
	Type        string `json:"type"`
	CardPresent struct {
		Brand      string `json:"brand"`
		Last4      string `json:"last4"`
		EntryMode  string `json:"entry_mode"`
		TerminalID string `json:"terminal_id"`
		AuthCode   string `json:"auth_code"`
		P2PE       *bool  `json:"p2pe"`
	} `json:"card_present"`
}

// requireIntent checks a card-present answer: status code, intent status and
// payment_method_details exactly as documented (docs/terminals.md).
func requireIntent(t *testing.T, r *apptest.Response, code int, status, terminalID, brand, last4 string) payments.Intent {
	t.Helper()
	if r.Status != code {
		t.Fatalf("got %d %s, want %d", r.Status, r.Body, code)
	}
	var pi payments.Intent
	r.JSON(t, &pi)
	if string(pi.Status) != status || pi.Object != "payment_intent" || pi.PaymentMethodDetails == nil {
		t.Fatalf("intent: %s", r.Body)
	}
	var d cardPresent
	if err := json.Unmarshal(*pi.PaymentMethodDetails, &d); err != nil {
		t.Fatal(err)
	}
	c := d.CardPresent
	if d.Type != "card_present" || c.Brand != brand || c.Last4 != last4 || c.EntryMode != "chip" ||
		c.TerminalID != terminalID || c.P2PE == nil || !*c.P2PE {
		t.Fatalf("payment_method_details: %s", *pi.PaymentMethodDetails)
	}
	if status == "succeeded" && len(c.AuthCode) != 6 {
		t.Fatalf("auth code %q", c.AuthCode)
	}
	return pi
}
