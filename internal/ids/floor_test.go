package ids

import (
	"testing"
	"time"
)

func TestFloorOrdersWithNew(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	id := New("pi_")
	after := time.Now().Add(time.Millisecond)
	if lo, hi := Floor("pi_", before), Floor("pi_", after); !(lo <= id && id < hi) {
		t.Fatalf("Floor(before)=%s id=%s Floor(after)=%s", lo, id, hi)
	}
	if len(Floor("pi_", time.Now())) != len(id) {
		t.Fatal("Floor has another length than New")
	}
}
