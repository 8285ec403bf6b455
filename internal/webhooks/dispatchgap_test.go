package webhooks

import (
	"testing"
	"time"
)

// TestDispatchGapAdapts: small batches widen the gap between dispatches up
// to dispatchMaxGap, full ones narrow it back to dispatchGap, and it never
// leaves those bounds.
func TestDispatchGapAdapts(t *testing.T) {
	gap := dispatchGap
	for range 10 {
		gap = nextDispatchGap(gap, 1)
	}
	if gap != dispatchMaxGap {
		t.Fatalf("after small batches the gap is %s, want %s", gap, dispatchMaxGap)
	}
	if g := nextDispatchGap(gap, 0); g != dispatchMaxGap {
		t.Fatalf("an empty dispatch at the widest gap gave %s, want %s", g, dispatchMaxGap)
	}
	if g := nextDispatchGap(gap, dispatchTarget); g != dispatchMaxGap/2 {
		t.Fatalf("a batch of %d at %s gave %s, want %s", dispatchTarget, gap, g, dispatchMaxGap/2)
	}
	for range 10 {
		gap = nextDispatchGap(gap, dispatchBatch)
	}
	if gap != dispatchGap {
		t.Fatalf("after full batches the gap is %s, want %s", gap, dispatchGap)
	}
	if dispatchMaxGap > 100*time.Millisecond {
		t.Fatalf("dispatchMaxGap %s: an event under load would wait too long for its dispatch", dispatchMaxGap)
	}
}
