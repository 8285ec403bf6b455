package payments

import (
	"errors"

	"github.com/payd/payd/internal/statemachine"
)

// transition is one named move of the state machine. Every status change of
// an intent goes through exactly one of these, written as a compare-and-set
// (UPDATE ... WHERE id = ? AND status IN (from) AND version = ?), so two
// racing requests can never both move the same intent.
type transition = statemachine.Move[Status]

// The transition table. Creation inserts
// the first row directly in its status; everything after is one of these.
var (
	// claim marks an intent as being decided by a remote provider call, so
	// a second caller cannot start another call meanwhile.
	claim = transition{Name: "claim", From: []Status{RequiresAction}, To: Processing}
	// await leaves the intent waiting for the customer: a remote create was
	// answered, a hosted page moved to its next step (3-D Secure), or a
	// sandbox override changed what the next step will do.
	await = transition{Name: "await_customer", From: []Status{RequiresAction, Processing}, To: RequiresAction}
	// overrideScenario changes what the next step of a waiting intent will
	// do (POST /v1/sandbox/overrides).
	overrideScenario = transition{Name: "override_scenario", From: []Status{RequiresAction}, To: RequiresAction}
	// succeed captures the money: the ledger credit is written with it.
	succeed = transition{Name: "succeed", From: []Status{RequiresAction, Processing}, To: Succeeded, Events: []string{EventSucceeded}}
	// cancel records the provider's refusal in last_error.
	cancel = transition{Name: "cancel", From: []Status{RequiresAction, Processing}, To: Canceled, Events: []string{EventCanceled}}
	// holdForReview parks the payment for a compliance review.
	holdForReview = transition{Name: "hold_for_review", From: []Status{RequiresAction, Processing}, To: ComplianceReview, Events: []string{EventComplianceReview}}
	// authorize holds a manual-capture card payment's authorisation: no
	// ledger credit until it is captured.
	authorize = transition{Name: "authorize", From: []Status{RequiresAction, Processing}, To: RequiresCapture, Events: []string{EventAmountCapturableUpdated}}
	// capture captures (part of) an authorisation: the ledger credit of the
	// captured amount is written with it, the rest is released.
	capture = transition{Name: "capture", From: []Status{RequiresCapture}, To: Succeeded, Events: []string{EventSucceeded}}
	// cancelRequested is a cancel by the merchant (POST .../cancel) or by
	// the expiry job; it records cancellation_reason. From processing (a
	// provider call in flight) it is refused.
	cancelRequested = transition{Name: "cancel_requested", From: []Status{RequiresAction, RequiresCapture}, To: Canceled, Events: []string{EventCanceled}}
)

// machine is the payment intent state machine. An intent is created in any
// of its states but processing: waiting for the customer, or already
// decided by an in-process provider (succeeded, canceled), held for review
// or authorised for a manual capture.
var machine = statemachine.Table[Status]{
	Name:     "payment_intents",
	Initial:  []Status{RequiresAction, Succeeded, Canceled, ComplianceReview, RequiresCapture},
	Terminal: []Status{Succeeded, Canceled},
	Moves:    []transition{claim, await, overrideScenario, succeed, cancel, holdForReview, authorize, capture, cancelRequested},
}

// The events of a payment intent.
const (
	EventCreated          = "payment_intent.created"
	EventSucceeded        = "payment_intent.succeeded"
	EventCanceled         = "payment_intent.canceled"
	EventComplianceReview = "payment_intent.compliance_review"
	// EventAmountCapturableUpdated: a manual-capture card payment was
	// authorised and waits for its capture (requires_capture).
	EventAmountCapturableUpdated = "payment_intent.amount_capturable_updated"
)

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return machine.IsTerminal(s) }

// Valid reports whether s is one of the six states.
func (s Status) Valid() bool {
	switch s {
	case RequiresAction, Processing, Succeeded, Canceled, ComplianceReview, RequiresCapture:
		return true
	}
	return false
}

// errLostRace means another request moved the intent first; the caller
// re-reads it and decides again.
var errLostRace = errors.New("payments: the intent changed under this request")
