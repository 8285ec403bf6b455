package store

import "testing"

func TestPlaceholders(t *testing.T) {
	if got := Placeholders(3); got != "?, ?, ?" {
		t.Fatalf("%q", got)
	}
	if got := Postgres.Rebind("x IN (" + Placeholders(2) + ")"); got != "x IN ($1, $2)" {
		t.Fatalf("%q", got)
	}
	if a := Args([]string{"a", "b"}); len(a) != 2 || a[1] != "b" {
		t.Fatalf("%v", a)
	}
}

func TestPaddedIn(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1, 1}, {2, 2}, {3, 4}, {5, 8}, {200, 256}} {
		vals := make([]int, c.n)
		for i := range vals {
			vals[i] = i
		}
		ph, args := PaddedIn(vals)
		if ph != Placeholders(c.want) || len(args) != c.want {
			t.Fatalf("%d values: %d placeholders, %d args; want %d", c.n, len(ph)/3+1, len(args), c.want)
		}
		seen := map[int]bool{}
		for _, a := range args {
			seen[a.(int)] = true
		}
		if len(seen) != c.n || args[c.want-1] != c.n-1 {
			t.Fatalf("%d values: padded list %v does not hold exactly the values", c.n, args)
		}
	}
}

func TestRows(t *testing.T) {
	if got := Rows(2, 3); got != "(?, ?, ?), (?, ?, ?)" {
		t.Fatalf("%q", got)
	}
	if got := Rows(1, 1); got != "(?)" {
		t.Fatalf("%q", got)
	}
}

func TestPaddedInEmpty(t *testing.T) {
	if ph, args := PaddedIn([]string(nil)); ph != "NULL" || len(args) != 0 {
		t.Fatalf("empty list: %q %v; want NULL and no arguments", ph, args)
	}
}

type ownedRow struct {
	merchant string
	live     bool
}

func (r *ownedRow) Owner() (string, bool) { return r.merchant, r.live }

// TestOwned: a row of another merchant or mode reads as missing; the read's
// own error goes through.
func TestOwned(t *testing.T) {
	row := &ownedRow{"mer_a", false}
	if got, err := Owned(row, nil, "mer_a", false); err != nil || got != row {
		t.Fatalf("own row: %v %v", got, err)
	}
	for _, c := range []struct {
		merchant string
		live     bool
	}{{"mer_b", false}, {"mer_a", true}} {
		if got, err := Owned(row, nil, c.merchant, c.live); !IsNotFound(err) || got != nil {
			t.Fatalf("asked by %s live=%v: %v %v, want not found", c.merchant, c.live, got, err)
		}
	}
	var none *ownedRow
	if _, err := Owned(none, ErrConflict, "mer_a", false); err != ErrConflict {
		t.Fatalf("the read's error became %v", err)
	}
}
