package terminals

import "github.com/payd/payd/internal/errs"

// transition is one row of the terminal state machine: the states it may
// start from, the state it ends in, and the timestamp column it sets.
type transition struct {
	name     string
	from     []Status
	to       Status
	stampCol string
}

// The terminal state machine.
// Every status change is one of these, applied with a compare-and-set UPDATE.
var (
	// activateTransition enables transaction processing.
	activateTransition = transition{name: "activate", from: []Status{Inactive}, to: Active, stampCol: "activated_at"}
	// deregisterTransition blocks all future transactions for good.
	deregisterTransition = transition{name: "deregister", from: []Status{Inactive, Active}, to: Deregistered, stampCol: "deregistered_at"}
)

// allows reports whether the transition may start from s.
func (t transition) allows(s Status) bool {
	for _, f := range t.from {
		if f == s {
			return true
		}
	}
	return false
}

// refusal is the 409 for a transition the state machine forbids from s.
func (t transition) refusal(id string, s Status) error {
	if s == t.to {
		return errs.InvalidState("terminal %s is already %s", id, s)
	}
	return errs.InvalidState("cannot %s terminal %s: it is %s", t.name, id, s)
}
