package disputes

import (
	"slices"
	"strings"
)

// transition is one named move of the dispute state machine. Every status
// change after creation is one of these, written as a compare-and-set
// (UPDATE ... WHERE id = ? AND status IN (from)), so two racing requests (a
// submit and a close, a provider's callback and the merchant) never both
// move the same dispute.
type transition struct {
	name   string
	from   []Status
	to     Status
	events []string // the events the move emits, in order
}

// The transition table. Creation inserts the first row in needs_response
// (events dispute.created and dispute.funds_withdrawn).
var (
	// save keeps needs_response: evidence saved, not submitted.
	save = transition{"save", []Status{NeedsResponse}, NeedsResponse, []string{EventUpdated}}
	// submit sends the evidence to the bank.
	submit = transition{"submit", []Status{NeedsResponse}, UnderReview, []string{EventUpdated}}
	// accept is the merchant closing the dispute: it accepts the loss.
	accept = transition{"accept", []Status{NeedsResponse}, Lost, []string{EventClosed}}
	// win is the bank deciding for the merchant; the money returns.
	win = transition{"win", []Status{NeedsResponse, UnderReview}, Won, []string{EventClosed, EventFundsReinstated}}
	// lose is the bank deciding for the cardholder; the money stays withdrawn.
	lose = transition{"lose", []Status{NeedsResponse, UnderReview}, Lost, []string{EventClosed}}
)

// transitions lists every move; tests derive the allowed pairs from it.
var transitions = []transition{save, submit, accept, win, lose}

// The events of a dispute.
const (
	EventCreated         = "dispute.created"
	EventUpdated         = "dispute.updated"
	EventClosed          = "dispute.closed"
	EventFundsWithdrawn  = "dispute.funds_withdrawn"
	EventFundsReinstated = "dispute.funds_reinstated"
)

// Events lists every dispute event type.
var Events = []string{EventCreated, EventUpdated, EventClosed, EventFundsWithdrawn, EventFundsReinstated}

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return s == Won || s == Lost }

// cas is the SQL condition of t: "status IN (...)".
func (t transition) cas() string {
	quoted := make([]string, len(t.from))
	for i, f := range t.from {
		quoted[i] = "'" + string(f) + "'"
	}
	return "status IN (" + strings.Join(quoted, ", ") + ")"
}

// allowed reports whether the table has a move from a to b.
func allowed(a, b Status) bool {
	for _, t := range transitions {
		if t.to == b && slices.Contains(t.from, a) {
			return true
		}
	}
	return false
}
