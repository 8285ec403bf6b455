package payouts

import "github.com/payd/payd/internal/statemachine"

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

// transition is one named move of the payout state machine. Every status
// change is a compare-and-set whose condition the table gives
// (machine.Cond, which refuses a move the table lacks), so two racing
// requests cannot both move the same payout.
type transition = statemachine.Move[Status]

// machine is the payout state machine. A payout is created requiring
// approval, held, pending (a batch row) or processing (sent at once).
// Succeeded and canceled end it; failed is left only by an explicit retry
// (Status.Terminal counts it as done, for a batch's counters).
var machine = statemachine.Table[Status]{
	Name:     "payouts",
	Initial:  []Status{RequiresApproval, Held, Pending, Processing},
	Terminal: []Status{Succeeded, Canceled},
	Moves: []transition{
		// review release, over the threshold and not yet approved
		{Name: "release_for_approval", From: []Status{Held}, To: RequiresApproval},
		// review release or approval of a batch row: it waits for a dispatcher
		{Name: "queue", From: []Status{Held, RequiresApproval}, To: Pending},
		// review release or approval of a single payout (sent at once), a
		// dispatcher's claim, a reclaim after its lease ran out, a retry
		{Name: "send", From: []Status{Held, RequiresApproval, Pending, Processing, Failed}, To: Processing},
		// review reject (failure_code screening_rejected), batch cancel
		{Name: "cancel", From: []Status{Held, RequiresApproval, Pending}, To: Canceled},
		// the rail's answer
		{Name: "succeed", From: []Status{Processing}, To: Succeeded},
		{Name: "fail", From: []Status{Processing}, To: Failed},
		// the rail holds it for compliance
		{Name: "hold", From: []Status{Processing}, To: Held},
	},
}

// casFrom returns the SQL condition "status IN (...)" for moving to `to`
// from any of from (machine.Cond).
func casFrom(to Status, from ...Status) string { return machine.Cond(to, from...) }

// BatchStatus is a bulk batch's state.
type BatchStatus string

// The states of a batch.
const (
	BatchPendingApproval BatchStatus = "pending_approval" // variant B, until a second principal approves
	BatchProcessing      BatchStatus = "processing"       // rows fan out; some are not terminal
	BatchCompleted       BatchStatus = "completed"        // every row terminal
	BatchCanceled        BatchStatus = "canceled"         // canceled before any row was processed
)

// batchMachine is the batch state machine. A batch is created pending
// approval (variant B) or processing.
var batchMachine = statemachine.Table[BatchStatus]{
	Name:     "payout_batches",
	Initial:  []BatchStatus{BatchPendingApproval, BatchProcessing},
	Terminal: []BatchStatus{BatchCanceled},
	Moves: []statemachine.Move[BatchStatus]{
		// variant B, another principal
		{Name: "approve", From: []BatchStatus{BatchPendingApproval}, To: BatchProcessing},
		// the last row became terminal
		{Name: "complete", From: []BatchStatus{BatchProcessing}, To: BatchCompleted, Events: []string{"payout_batch.completed"}},
		// a failed row was retried
		{Name: "reopen", From: []BatchStatus{BatchCompleted}, To: BatchProcessing},
		// cancel before any row was sent
		{Name: "cancel", From: []BatchStatus{BatchPendingApproval, BatchProcessing}, To: BatchCanceled},
	},
}

// batchCASFrom is casFrom for batches (batchMachine.Cond).
func batchCASFrom(to BatchStatus, from ...BatchStatus) string { return batchMachine.Cond(to, from...) }
