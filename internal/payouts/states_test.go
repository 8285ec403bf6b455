package payouts

import (
	"slices"
	"testing"

	"github.com/payd/payd/internal/statemachine/statemachinetest"
)

// TestTransitionTables pins the payout and batch state machines: every
// allowed move and nothing else, each table sound (statemachinetest), and
// a move the table lacks refused when its condition is asked for.
func TestTransitionTables(t *testing.T) {
	want := map[Status][]Status{
		Held:             {RequiresApproval, Pending, Processing, Canceled},
		RequiresApproval: {Pending, Processing, Canceled},
		Pending:          {Processing, Canceled},
		Processing:       {Processing, Succeeded, Failed, Held},
		Failed:           {Processing},
	}
	for _, a := range Statuses {
		for _, b := range Statuses {
			if got := machine.Allowed(a, b); got != slices.Contains(want[a], b) {
				t.Errorf("%s → %s allowed = %v", a, b, got)
			}
		}
		if !slices.Contains(machine.States(), a) {
			t.Errorf("the table does not name %s", a)
		}
	}
	statemachinetest.Check(t, &machine, "payouts")
	statemachinetest.Check(t, &batchMachine, "payout_batches")
	if got := casFrom(Canceled, Pending, Held); got != "status IN ('pending', 'held')" {
		t.Errorf("casFrom: %q", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("casFrom(succeeded, pending): a move the table lacks did not panic")
			}
		}()
		casFrom(Succeeded, Pending)
	}()
	batches := map[BatchStatus][]BatchStatus{
		BatchPendingApproval: {BatchProcessing, BatchCanceled},
		BatchProcessing:      {BatchCompleted, BatchCanceled},
		BatchCompleted:       {BatchProcessing},
	}
	all := []BatchStatus{BatchPendingApproval, BatchProcessing, BatchCompleted, BatchCanceled}
	for _, a := range all {
		for _, b := range all {
			if got := batchMachine.Allowed(a, b); got != slices.Contains(batches[a], b) {
				t.Errorf("batch %s → %s allowed = %v", a, b, got)
			}
		}
	}
}
