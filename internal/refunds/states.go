package refunds

import (
	"slices"
	"strings"
)

// transition is one named move of the refund state machine. Every status
// change after creation is one of these, written as a compare-and-set
// (UPDATE ... WHERE id = ? AND status IN (from)), so two racing requests
// (an approve and a cancel, a callback and reconciliation) never both move
// the same refund.
type transition struct {
	name  string
	from  []Status
	to    Status
	event string // the event the move emits ("" for none)
}

// The transition table. Creation inserts the first row directly in its
// status: requires_approval (over the threshold), pending (sent, no answer
// yet), or at once succeeded or failed when an in-process provider (the
// sandbox) answered before the row was written.
var (
	// approve clears a refund over the threshold; it is then sent.
	approve = transition{"approve", []Status{RequiresApproval}, Pending, ""}
	// cancel drops a refund that waits for approval; its float returns.
	cancel = transition{"cancel", []Status{RequiresApproval}, Canceled, EventCanceled}
	// succeed records the provider's success: the money left.
	succeed = transition{"succeed", []Status{Pending}, Succeeded, EventSucceeded}
	// fail records the provider's refusal; the float returns.
	fail = transition{"fail", []Status{Pending}, Failed, EventFailed}
)

// transitions lists every move; tests derive the allowed pairs from it.
var transitions = []transition{approve, cancel, succeed, fail}

// The events of a refund.
const (
	EventCreated   = "refund.created"
	EventSucceeded = "refund.succeeded"
	EventFailed    = "refund.failed"
	EventCanceled  = "refund.canceled"
)

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return s == Succeeded || s == Failed || s == Canceled }

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
