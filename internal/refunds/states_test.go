package refunds

import (
	"slices"
	"testing"

	"github.com/payd/payd/internal/statemachine/statemachinetest"
)

// TestTransitionTable pins the refund state machine: every allowed move,
// and nothing else; terminal states have no way out.
func TestTransitionTable(t *testing.T) {
	wantMoves := map[[2]Status]bool{
		{RequiresApproval, Pending}:  true, // approve
		{RequiresApproval, Canceled}: true, // cancel
		{Pending, Succeeded}:         true, // the provider's success
		{Pending, Failed}:            true, // the provider's refusal
	}
	for _, a := range Statuses {
		for _, b := range Statuses {
			if got := machine.Allowed(a, b); got != wantMoves[[2]Status{a, b}] {
				t.Errorf("%s → %s allowed = %v", a, b, got)
			}
		}
		if a.Terminal() {
			for _, b := range Statuses {
				if machine.Allowed(a, b) {
					t.Errorf("terminal %s leads to %s", a, b)
				}
			}
		}
	}
	for _, s := range Statuses {
		if !slices.Contains(machine.States(), s) {
			t.Errorf("the table does not name %s", s)
		}
	}
	statemachinetest.Check(t, &machine, "refunds")
	if approve.Cond() != "status IN ('requires_approval')" {
		t.Errorf("approve cas %q", approve.Cond())
	}
}
