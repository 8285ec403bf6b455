package disputes

import "github.com/payd/payd/internal/statemachine"

// transition is one named move of the dispute state machine. Every status
// change after creation is one of these, written as a compare-and-set
// (UPDATE ... WHERE id = ? AND status IN (from): Move.Cond), so two racing
// requests (a submit and a close, a provider's callback and the merchant)
// never both move the same dispute.
type transition = statemachine.Move[Status]

// The moves. Creation inserts the first row in needs_response (events
// dispute.created and dispute.funds_withdrawn).
var (
	// save keeps needs_response: evidence saved, not submitted.
	save = transition{Name: "save", From: []Status{NeedsResponse}, To: NeedsResponse, Events: []string{EventUpdated}}
	// submit sends the evidence to the bank.
	submit = transition{Name: "submit", From: []Status{NeedsResponse}, To: UnderReview, Events: []string{EventUpdated}}
	// accept is the merchant closing the dispute: it accepts the loss.
	accept = transition{Name: "accept", From: []Status{NeedsResponse}, To: Lost, Events: []string{EventClosed}}
	// win is the bank deciding for the merchant; the money returns.
	win = transition{Name: "win", From: []Status{NeedsResponse, UnderReview}, To: Won, Events: []string{EventClosed, EventFundsReinstated}}
	// lose is the bank deciding for the cardholder; the money stays withdrawn.
	lose = transition{Name: "lose", From: []Status{NeedsResponse, UnderReview}, To: Lost, Events: []string{EventClosed}}
)

// machine is the dispute state machine.
var machine = statemachine.Table[Status]{
	Name:     "disputes",
	Initial:  []Status{NeedsResponse},
	Terminal: []Status{Won, Lost},
	Moves:    []transition{save, submit, accept, win, lose},
}

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
func (s Status) Terminal() bool { return machine.IsTerminal(s) }
