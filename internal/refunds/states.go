package refunds

import "github.com/payd/payd/internal/statemachine"

// transition is one named move of the refund state machine. Every status
// change after creation is one of these, written as a compare-and-set
// (UPDATE ... WHERE id = ? AND status IN (from): Move.Cond), so two racing
// requests (an approve and a cancel, a callback and reconciliation) never
// both move the same refund.
type transition = statemachine.Move[Status]

// The moves. Creation inserts the first row directly in its status:
// requires_approval (over the threshold), pending (sent, no answer yet), or
// at once succeeded or failed when an in-process provider (the sandbox)
// answered before the row was written.
var (
	// approve clears a refund over the threshold; it is then sent.
	approve = transition{Name: "approve", From: []Status{RequiresApproval}, To: Pending}
	// cancel drops a refund that waits for approval; its float returns.
	cancel = transition{Name: "cancel", From: []Status{RequiresApproval}, To: Canceled, Events: []string{EventCanceled}}
	// succeed records the provider's success: the money left.
	succeed = transition{Name: "succeed", From: []Status{Pending}, To: Succeeded, Events: []string{EventSucceeded}}
	// fail records the provider's refusal; the float returns.
	fail = transition{Name: "fail", From: []Status{Pending}, To: Failed, Events: []string{EventFailed}}
)

// machine is the refund state machine.
var machine = statemachine.Table[Status]{
	Name:     "refunds",
	Initial:  []Status{RequiresApproval, Pending, Succeeded, Failed},
	Terminal: []Status{Succeeded, Failed, Canceled},
	Moves:    []transition{approve, cancel, succeed, fail},
}

// The events of a refund.
const (
	EventCreated   = "refund.created"
	EventSucceeded = "refund.succeeded"
	EventFailed    = "refund.failed"
	EventCanceled  = "refund.canceled"
)

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return machine.IsTerminal(s) }
