package store

import (
	"strings"
	"testing"
)

// TestMigrationsDoNotDrift keeps the two engines' schemas one schema: every
// migration exists for both, and the PostgreSQL file equals the SQLite file
// after the known type substitutions. A line that must differ carries the
// comment "-- engine-specific" in both files and is compared by position only.
func TestMigrationsDoNotDrift(t *testing.T) {
	lite, err := SQLite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations but %d PostgreSQL ones", len(lite), len(pg))
	}
	subst := strings.NewReplacer("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY", "BLOB", "BYTEA")
	for i := range lite {
		if lite[i].Name != pg[i].Name {
			t.Fatalf("migration %d is %s on SQLite but %s on PostgreSQL", i, lite[i].Name, pg[i].Name)
		}
		want := strings.Split(subst.Replace(lite[i].SQL), "\n")
		got := strings.Split(pg[i].SQL, "\n")
		if len(want) != len(got) {
			t.Errorf("%s: %d lines on SQLite, %d on PostgreSQL", lite[i].Name, len(want), len(got))
			continue
		}
		for j := range want {
			if strings.Contains(want[j], "-- engine-specific") && strings.Contains(got[j], "-- engine-specific") {
				continue
			}
			if want[j] != got[j] {
				t.Errorf("%s line %d drifts:\n  sqlite:   %s\n  postgres: %s", lite[i].Name, j+1, want[j], got[j])
			}
		}
	}
}
