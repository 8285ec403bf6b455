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
