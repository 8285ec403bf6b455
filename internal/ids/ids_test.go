package ids

import (
	"sort"
	"strings"
	"testing"
	"time"
)

func TestNewIsOrderedAndUnique(t *testing.T) {
	const n = 20000
	got := make([]string, n)
	seen := make(map[string]bool, n)
	for i := range got {
		got[i] = New("pi_")
		if seen[got[i]] {
			t.Fatalf("duplicate id %s", got[i])
		}
		seen[got[i]] = true
	}
	if !sort.StringsAreSorted(got) {
		t.Fatal("ids made in sequence are not sorted")
	}
	if len(got[0]) != len("pi_")+26 || !strings.HasPrefix(got[0], "pi_") {
		t.Fatalf("bad shape %q", got[0])
	}
}

func TestLaterMillisecondSortsAfter(t *testing.T) {
	a := newAt("x_", time.Unix(1000, 0))
	b := newAt("x_", time.Unix(1000, int64(2*time.Millisecond)))
	if !(a < b) {
		t.Fatalf("%s should sort before %s", a, b)
	}
}

func TestSecret(t *testing.T) {
	s := Secret("sk_test_", 32)
	if !strings.HasPrefix(s, "sk_test_") || len(s) < 50 {
		t.Fatalf("bad secret %q", s)
	}
	if Secret("", 32) == Secret("", 32) {
		t.Fatal("secrets repeat")
	}
}

func TestAtAndFloor(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	if Floor("pi_", at) != At("pi_", at, 0) {
		t.Fatal("Floor is At with seq 0")
	}
	a, b := At("pi_", at, 1), At("pi_", at, 2)
	if !(Floor("pi_", at) < a && a < b && b < Floor("pi_", at.Add(time.Millisecond))) {
		t.Fatalf("order: %s %s", a, b)
	}
	if n := newAt("pi_", at); !(Floor("pi_", at) <= n && n < Floor("pi_", at.Add(time.Millisecond))) {
		t.Fatalf("an id made at t sorts within t's millisecond: %s", n)
	}
}
