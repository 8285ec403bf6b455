package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestMigrationOverrides keeps the two engines' schemas one schema. Each
// migration is written once (migrations/NNNN_name.sql); an engine's override
// (migrations/<engine>/NNNN_name.sql) must override a shared file, must
// differ from it, and may differ from it only in the engine-specific types
// (BLOB/BYTEA, INTEGER PRIMARY KEY AUTOINCREMENT/BIGSERIAL PRIMARY KEY) and
// in lines that carry the comment "-- engine-specific" in both files,
// compared by position. Both engines then have the same migrations, by
// version and name, so a database's schema_migrations rows mean the same on
// either.
func TestMigrationOverrides(t *testing.T) {
	shared, err := readMigrations("migrations")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Migration{}
	for i := range shared {
		byName[shared[i].Name] = &shared[i]
	}
	for _, d := range []Dialect{SQLite, Postgres} {
		overrides, err := readMigrations("migrations/" + d.String())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range overrides {
			for _, p := range overrideProblems(byName[o.Name], o) {
				t.Errorf("%s/%s: %s", d, o.Name, p)
			}
		}
		migs, err := d.Migrations()
		if err != nil {
			t.Fatal(err)
		}
		if len(migs) != len(shared) {
			t.Fatalf("%s has %d migrations, the shared folder %d", d, len(migs), len(shared))
		}
		for i := range migs {
			if migs[i].Version != shared[i].Version || migs[i].Name != shared[i].Name {
				t.Fatalf("%s's migration %d is %s, the shared folder's %s", d, i, migs[i].Name, shared[i].Name)
			}
		}
	}
}

// overrideProblems says what is wrong with override o of the shared
// migration s (nil when there is none).
func overrideProblems(s *Migration, o Migration) []string {
	if s == nil {
		return []string{"overrides no shared migration of that name"}
	}
	if s.SQL == o.SQL {
		return []string{"is identical to the shared file: delete it"}
	}
	canon := strings.NewReplacer("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY", "BLOB", "BYTEA")
	want := strings.Split(canon.Replace(s.SQL), "\n")
	got := strings.Split(canon.Replace(o.SQL), "\n")
	if len(want) != len(got) {
		return []string{fmt.Sprintf("has %d lines, the shared file %d", len(got), len(want))}
	}
	var out []string
	for j := range want {
		if strings.Contains(want[j], "-- engine-specific") && strings.Contains(got[j], "-- engine-specific") {
			continue
		}
		if want[j] != got[j] {
			out = append(out, fmt.Sprintf("line %d drifts:\n  shared:   %s\n  override: %s", j+1, want[j], got[j]))
		}
	}
	return out
}

// TestOverrideProblemsCatchDrift: the override check refuses what it must.
func TestOverrideProblemsCatchDrift(t *testing.T) {
	shared := &Migration{Name: "0001_x", SQL: "CREATE TABLE t (\n    id INTEGER PRIMARY KEY AUTOINCREMENT,\n    b BLOB\n);\nSELECT 1; -- engine-specific\n"}
	for _, c := range []struct {
		name     string
		shared   *Migration
		override string
		problems bool
	}{
		{"types only", shared, "CREATE TABLE t (\n    id BIGSERIAL PRIMARY KEY,\n    b BYTEA\n);\nSELECT 1; -- engine-specific\n", false},
		{"a marked line", shared, "CREATE TABLE t (\n    id INTEGER PRIMARY KEY AUTOINCREMENT,\n    b BLOB\n);\nALTER TABLE t SET (fillfactor = 70); -- engine-specific\n", false},
		{"identical", shared, shared.SQL, true},
		{"no shared file", nil, shared.SQL, true},
		{"another column", shared, "CREATE TABLE t (\n    id BIGSERIAL PRIMARY KEY,\n    b TEXT\n);\nSELECT 1; -- engine-specific\n", true},
		{"a line more", shared, shared.SQL + "CREATE INDEX t_b ON t (b);\n", true},
		{"a line marked on one side only", shared, "CREATE TABLE t (\n    id INTEGER PRIMARY KEY AUTOINCREMENT,\n    b BLOB -- engine-specific\n);\nSELECT 1; -- engine-specific\n", true},
	} {
		got := overrideProblems(c.shared, Migration{Name: "0001_x", SQL: c.override})
		if (len(got) > 0) != c.problems {
			t.Errorf("%s: problems %q, want some: %v", c.name, got, c.problems)
		}
	}
}
