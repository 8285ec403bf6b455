package ids

import (
	"testing"
	"time"
)

func TestParseReversesAt(t *testing.T) {
	at := time.Date(2026, 11, 26, 2, 30, 0, 123e6, time.UTC)
	for _, seq := range []uint64{0, 1, 42, 1 << 40, ^uint64(0)} {
		id := At("txn_", at, seq)
		got, s, ok := Parse("txn_", id)
		if !ok || !got.Equal(at) || s != seq {
			t.Errorf("Parse(%s) = %v, %d, %v; want %v, %d", id, got, s, ok, at, seq)
		}
	}
	for _, bad := range []string{"", "txn_", "pi_" + At("", at, 1), "txn_" + "ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "txn_0000000000000000000000000U", "txn_000000000000000000000000"} {
		if _, _, ok := Parse("txn_", bad); ok {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(At("txn_", time.Now(), 7))
	f.Add("txn_7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
	f.Fuzz(func(t *testing.T, id string) {
		at, seq, ok := Parse("txn_", id)
		if !ok {
			return
		}
		// What Parse reads back names one id of At's shape, which parses to
		// the same time and seq.
		at2, seq2, ok2 := Parse("txn_", At("txn_", at, seq))
		if !ok2 || !at2.Equal(at) || seq2 != seq {
			t.Fatalf("%s: (%v, %d) does not round-trip: (%v, %d, %v)", id, at, seq, at2, seq2, ok2)
		}
	})
}
