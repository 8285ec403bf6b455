package payments

import "errors"

// transition is one named move of the state machine. Every status change of
// an intent goes through exactly one of these, written as a compare-and-set
// (UPDATE ... WHERE id = ? AND status IN (from) AND version = ?), so two
// racing requests can never both move the same intent.
type transition struct {
	name  string
	from  []Status
	to    Status
	event string // the event the move emits ("" for none)
}

// The transition table. Creation inserts
// the first row directly in its status; everything after is one of these.
var (
	// claim marks an intent as being decided by a remote provider call, so
	// a second caller cannot start another call meanwhile.
	claim = transition{"claim", []Status{RequiresAction}, Processing, ""}
	// await leaves the intent waiting for the customer: a remote create was
	// answered, a hosted page moved to its next step (3-D Secure), or a
	// sandbox override changed what the next step will do.
	await = transition{"await_customer", []Status{RequiresAction, Processing}, RequiresAction, ""}
	// overrideScenario changes what the next step of a waiting intent will
	// do (POST /v1/sandbox/overrides).
	overrideScenario = transition{"override_scenario", []Status{RequiresAction}, RequiresAction, ""}
	// succeed captures the money: the ledger credit is written with it.
	succeed = transition{"succeed", []Status{RequiresAction, Processing}, Succeeded, EventSucceeded}
	// cancel records the provider's refusal in last_error.
	cancel = transition{"cancel", []Status{RequiresAction, Processing}, Canceled, EventCanceled}
	// holdForReview parks the payment for a compliance review.
	holdForReview = transition{"hold_for_review", []Status{RequiresAction, Processing}, ComplianceReview, EventComplianceReview}
	// authorize holds a manual-capture card payment's authorisation: no
	// ledger credit until it is captured.
	authorize = transition{"authorize", []Status{RequiresAction, Processing}, RequiresCapture, EventAmountCapturableUpdated}
	// capture captures (part of) an authorisation: the ledger credit of the
	// captured amount is written with it, the rest is released.
	capture = transition{"capture", []Status{RequiresCapture}, Succeeded, EventSucceeded}
	// cancelRequested is a cancel by the merchant (POST .../cancel) or by
	// the expiry job; it records cancellation_reason. From processing (a
	// provider call in flight) it is refused.
	cancelRequested = transition{"cancel_requested", []Status{RequiresAction, RequiresCapture}, Canceled, EventCanceled}
)

// transitions lists every move; tests derive the allowed pairs from it.
var transitions = []transition{claim, await, overrideScenario, succeed, cancel, holdForReview, authorize, capture, cancelRequested}

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
func (s Status) Terminal() bool { return s == Succeeded || s == Canceled }

// Valid reports whether s is one of the six states.
func (s Status) Valid() bool {
	switch s {
	case RequiresAction, Processing, Succeeded, Canceled, ComplianceReview, RequiresCapture:
		return true
	}
	return false
}

// allowed reports whether the table has a move from a to b.
func allowed(a, b Status) bool {
	for _, t := range transitions {
		if t.to != b {
			continue
		}
		for _, f := range t.from {
			if f == a {
				return true
			}
		}
	}
	return false
}

// errLostRace means another request moved the intent first; the caller
// re-reads it and decides again.
var errLostRace = errors.New("payments: the intent changed under this request")
