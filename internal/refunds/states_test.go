package refunds

import "testing"

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
			if got := allowed(a, b); got != wantMoves[[2]Status{a, b}] {
				t.Errorf("%s → %s allowed = %v", a, b, got)
			}
		}
		if a.Terminal() {
			for _, b := range Statuses {
				if allowed(a, b) {
					t.Errorf("terminal %s leads to %s", a, b)
				}
			}
		}
	}
	for _, tr := range transitions {
		if got := tr.cas(); got == "" || tr.to == "" || len(tr.from) == 0 {
			t.Errorf("transition %s is incomplete: %q", tr.name, got)
		}
	}
	if approve.cas() != "status IN ('requires_approval')" {
		t.Errorf("approve cas %q", approve.cas())
	}
}
