package providers

import "context"

// PaymentChecker is implemented by adapters that refuse some payments
// before anything is recorded (a live rail that needs a field the sandbox
// does without, e.g. wallet_d direct's customer number). CheckPayment
// returns a 400-kind error naming the field.
type PaymentChecker interface {
	CheckPayment(p Payment) error
}

// AuthorizationHolder is implemented by adapters whose card payments can be
// authorised now and captured later (capture_method manual): their success
// on such a payment is an authorisation that payd holds at
// requires_capture, and the capture or release is recorded by payd. An
// adapter without it refuses manual capture (400 capture_method).
type AuthorizationHolder interface {
	HoldsAuthorizations() bool
}

// HoldsAuthorizations reports whether a may take manual-capture payments.
func HoldsAuthorizations(a PaymentAdapter) bool {
	h, ok := a.(AuthorizationHolder)
	return ok && h.HoldsAuthorizations()
}

// FlowCardPresent is the flow of a card read at a terminal: the card
// gateway authorised it before its intent was written, and the intent's
// ProviderRef is the terminal payment's reference (tpay_...) there.
const FlowCardPresent Flow = "card_present"

// HoldStatus is where a card authorisation held for manual capture stands
// at its provider.
type HoldStatus int

// The statuses of a held authorisation.
const (
	// Held: authorised, neither captured nor released yet.
	Held HoldStatus = iota + 1
	// Captured: captured, for HeldAuthorization.CapturedMinor (the rest
	// released).
	Captured
	// Released: voided (or declined): nothing will be captured.
	Released
)

// HeldAuthorization is a held card authorisation as its provider reports it.
type HeldAuthorization struct {
	Status        HoldStatus
	CapturedMinor int64
}

// AuthorizationSettler is implemented by remote adapters through which payd
// captures or releases a card authorisation it holds at requires_capture
// (live manual capture). Each call is idempotent at the provider, keyed by
// the payment, so a repeat after a lost answer (payd's retry, another
// process, reconciliation) never captures or releases twice. An error
// wrapping ErrNoAnswer means the outcome is unknown; any other error means
// the provider did not act or refused (ask LookupHold where it stands).
type AuthorizationSettler interface {
	// SettlesHolds reports whether the adapter captures and releases p's
	// authorisation; payd records the capture by itself otherwise.
	SettlesHolds(p Payment) bool
	// CaptureHold captures amountMinor (at most the authorised amount) of
	// p's authorisation; the rest is released.
	CaptureHold(ctx context.Context, p Payment, amountMinor int64) (HeldAuthorization, error)
	// VoidHold releases p's authorisation without capturing anything.
	VoidHold(ctx context.Context, p Payment) (HeldAuthorization, error)
	// LookupHold asks where p's authorisation stands, changing nothing;
	// found is false when the provider has no record of it.
	LookupHold(ctx context.Context, p Payment) (h HeldAuthorization, found bool, err error)
}
