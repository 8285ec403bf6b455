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
