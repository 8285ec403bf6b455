package payouts

import (
	"fmt"
	"slices"
	"strings"
)

// Status is a payout's state.
type Status string

// The states of a payout. Succeeded, failed and canceled are terminal;
// failed is left again only by an explicit retry.
const (
	RequiresApproval Status = "requires_approval" // over the approval threshold; waits for a second principal
	Held             Status = "held"              // a screening hit (or the rail's compliance hold); waits for review
	Pending          Status = "pending"           // cleared; waits for a dispatcher to send it
	Processing       Status = "processing"        // sent (or being sent) to the rail; the answer is not known yet
	Succeeded        Status = "succeeded"
	Failed           Status = "failed"
	Canceled         Status = "canceled"
)

// Statuses lists every payout state (for list filters).
var Statuses = []Status{RequiresApproval, Held, Pending, Processing, Succeeded, Failed, Canceled}

// Terminal reports whether s ends a payout (a batch counts it as done).
func (s Status) Terminal() bool { return s == Succeeded || s == Failed || s == Canceled }

// transitions is the payout state machine: from → the states it may move to.
// Every status change is a compare-and-set written from this table
// (casFrom), so two racing requests cannot both move the same payout.
//
//	held → requires_approval   review release, over the threshold and not yet approved
//	held → pending             review release of a batch row
//	held → processing          review release of a single payout (sent at once)
//	held → canceled            review reject (failure_code screening_rejected), batch cancel
//	requires_approval → pending / processing   approve (batch row / single payout)
//	requires_approval → canceled               batch cancel
//	pending → processing       a dispatcher claims it
//	pending → canceled         batch cancel
//	processing → processing    a dispatcher reclaims it after its lease ran out
//	processing → succeeded / failed            the rail's answer
//	processing → held          the rail holds it for compliance
//	failed → processing        retry
var transitions = map[Status][]Status{
	Held:             {RequiresApproval, Pending, Processing, Canceled},
	RequiresApproval: {Pending, Processing, Canceled},
	Pending:          {Processing, Canceled},
	Processing:       {Processing, Succeeded, Failed, Held},
	Failed:           {Processing},
}

// casFrom returns the SQL condition "status IN (...)" for moving to `to`
// from any of from, after checking the table allows each move: a move the
// table forbids is a programming error, caught by the tests of every path.
func casFrom(to Status, from ...Status) string {
	var b strings.Builder
	b.WriteString("status IN (")
	for i, f := range from {
		if !slices.Contains(transitions[f], to) {
			panic(fmt.Sprintf("payouts: the state machine has no move %s → %s", f, to))
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + string(f) + "'")
	}
	b.WriteString(")")
	return b.String()
}

// BatchStatus is a bulk batch's state.
type BatchStatus string

// The states of a batch.
const (
	BatchPendingApproval BatchStatus = "pending_approval" // variant B, until a second principal approves
	BatchProcessing      BatchStatus = "processing"       // rows fan out; some are not terminal
	BatchCompleted       BatchStatus = "completed"        // every row terminal
	BatchCanceled        BatchStatus = "canceled"         // canceled before any row was processed
)

// batchTransitions is the batch state machine.
//
//	pending_approval → processing   approve (variant B, another principal)
//	pending_approval → canceled     cancel
//	processing → completed          the last row became terminal
//	processing → canceled           cancel before any row was sent
//	completed → processing          a failed row was retried
var batchTransitions = map[BatchStatus][]BatchStatus{
	BatchPendingApproval: {BatchProcessing, BatchCanceled},
	BatchProcessing:      {BatchCompleted, BatchCanceled},
	BatchCompleted:       {BatchProcessing},
}

// batchCASFrom is casFrom for batches.
func batchCASFrom(to BatchStatus, from ...BatchStatus) string {
	var b strings.Builder
	b.WriteString("status IN (")
	for i, f := range from {
		if !slices.Contains(batchTransitions[f], to) {
			panic(fmt.Sprintf("payouts: the batch state machine has no move %s → %s", f, to))
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + string(f) + "'")
	}
	b.WriteString(")")
	return b.String()
}
