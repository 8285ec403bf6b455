package webhooks

import "testing"

// TestAllocate: free slots go to the merchant and endpoint with the fewest
// attempts in flight, never past the endpoint and merchant caps.
func TestAllocate(t *testing.T) {
	type ep struct {
		id, merchant       string
		due, inflight, old int
		fast               bool
	}
	cases := []struct {
		name             string
		eps              []ep
		merchantInflight map[string]int
		n                int
		want             map[string]int
		left             bool
	}{
		{
			name: "a stalled merchant with ten endpoints leaves half the slots",
			eps: []ep{{"we_a0", "bad", 1000, 0, 1, false}, {"we_a1", "bad", 1000, 0, 1, false}, {"we_a2", "bad", 1000, 0, 1, false}, {"we_a3", "bad", 1000, 0, 1, false},
				{"we_a4", "bad", 1000, 0, 1, false}, {"we_a5", "bad", 1000, 0, 1, false}, {"we_a6", "bad", 1000, 0, 1, false}, {"we_a7", "bad", 1000, 0, 1, false},
				{"we_a8", "bad", 1000, 0, 1, false}, {"we_a9", "bad", 1000, 0, 1, false}, {"we_b", "good", 5, 0, 9, false}},
			n:    32,
			want: map[string]int{"we_a0": 2, "we_a1": 2, "we_a2": 2, "we_a3": 2, "we_a4": 2, "we_a5": 2, "we_a6": 1, "we_a7": 1, "we_a8": 1, "we_a9": 1, "we_b": 5},
			left: true,
		},
		{
			name:             "a merchant at its cap gets nothing; the other gets every free slot up to its endpoint cap",
			eps:              []ep{{"we_a", "bad", 1000, 8, 1, false}, {"we_a2", "bad", 1000, 8, 1, false}, {"we_b", "good", 50, 0, 9, false}},
			merchantInflight: map[string]int{"bad": 16},
			n:                16,
			want:             map[string]int{"we_b": 8},
			left:             true,
		},
		{
			name: "one endpoint never passes its cap, whatever the free slots",
			eps:  []ep{{"we_a", "m", 100, 3, 1, false}},
			n:    32,
			want: map[string]int{"we_a": 5},
			left: true,
		},
		{
			name:             "the fewest in flight first: the new merchant is served before the busy one",
			eps:              []ep{{"we_a", "busy", 100, 6, 1, false}, {"we_b", "idle", 100, 0, 5, false}},
			merchantInflight: map[string]int{"busy": 6},
			n:                3,
			want:             map[string]int{"we_b": 3},
			left:             true,
		},
		{
			name: "a fast endpoint borrows the slots no one else can take; a slow one keeps to its cap",
			eps:  []ep{{"we_a", "m", 100, 0, 1, true}, {"we_b", "n", 100, 0, 1, false}},
			n:    32,
			want: map[string]int{"we_a": 24, "we_b": 8},
			left: true,
		},
		{
			name: "everything fits",
			eps:  []ep{{"we_a", "m", 2, 0, 1, false}, {"we_b", "n", 3, 0, 1, false}},
			n:    32,
			want: map[string]int{"we_a": 2, "we_b": 3},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var work []*dueWork
			mi := map[string]int{}
			for _, e := range c.eps {
				work = append(work, &dueWork{endpointID: e.id, merchantID: e.merchant, due: e.due, inflight: e.inflight, oldest: int64(e.old), fast: e.fast})
			}
			for k, v := range c.merchantInflight {
				mi[k] = v
			}
			left := allocate(work, mi, c.n, 8, 16)
			got := map[string]int{}
			for _, w := range work {
				if w.take > 0 {
					got[w.endpointID] = w.take
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("allocated %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("allocated %v, want %v", got, c.want)
				}
			}
			if left != c.left {
				t.Fatalf("left = %v, want %v", left, c.left)
			}
		})
	}
}
