package store_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/store"
)

// expandOnlySince is the first migration the rolling-upgrade rule applies
// to: every later one must leave the schema usable by the release before it.
const expandOnlySince = 2041

// contracting matches the statements that can break a running binary of the
// previous release: a table, column or index it uses dropped or renamed, a
// column's type changed, or a column it does not know made mandatory.
var contracting = []struct {
	what string
	re   *regexp.Regexp
}{
	{"drops a table", regexp.MustCompile(`(?i)\bDROP\s+TABLE\b`)},
	{"drops a column", regexp.MustCompile(`(?i)\bDROP\s+COLUMN\b`)},
	{"renames", regexp.MustCompile(`(?i)\bRENAME\b`)},
	{"changes a column's type", regexp.MustCompile(`(?i)\bALTER\s+COLUMN\s+\w+\s+(SET\s+DATA\s+)?TYPE\b`)},
	{"makes a column mandatory", regexp.MustCompile(`(?i)\bSET\s+NOT\s+NULL\b`)},
	{"adds a mandatory column without a default", regexp.MustCompile(`(?i)\bADD\s+(COLUMN\s+)?\w+\s+[^,;]*\bNOT\s+NULL\b`)},
}

// contractMarker lets a migration contract on purpose: the line names the
// release since which no binary uses what it removes.
const contractMarker = "-- contract:"

// TestMigrationsExpandOnly keeps rolling upgrades safe: processes of the
// previous release keep running while the new release's first process
// migrates, so a migration may only add (tables, nullable columns or columns
// with a default, indexes). Removing or tightening what the previous release
// uses waits for a later release, and says so with a "-- contract:" line.
func TestMigrationsExpandOnly(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		ms, err := d.Migrations()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Version < expandOnlySince || strings.Contains(m.SQL, contractMarker) {
				continue
			}
			for _, stmt := range strings.Split(stripComments(m.SQL), ";") {
				for _, c := range contracting {
					if !c.re.MatchString(stmt) {
						continue
					}
					if c.what == "adds a mandatory column without a default" && regexp.MustCompile(`(?i)\bDEFAULT\b`).MatchString(stmt) {
						continue
					}
					t.Errorf("%s migration %s %s, which the previous release's processes may still need during a rolling upgrade:\n%s\n"+
						"(add what is needed instead, and remove the old in a later release with a %q line saying since when nothing uses it)",
						d, m.Name, c.what, strings.TrimSpace(stmt), contractMarker)
				}
			}
		}
	}
}

// TestExpandOnlyRuleCatchesContractions: the rule's patterns find what they
// are for (so TestMigrationsExpandOnly can fail).
func TestExpandOnlyRuleCatchesContractions(t *testing.T) {
	for _, stmt := range []string{
		"DROP TABLE payouts", "ALTER TABLE payouts DROP COLUMN amount", "ALTER TABLE payouts RENAME COLUMN a TO b",
		"ALTER TABLE payouts ALTER COLUMN amount TYPE TEXT", "ALTER TABLE payouts ALTER COLUMN note SET NOT NULL",
		"ALTER TABLE payouts ADD COLUMN note TEXT NOT NULL",
	} {
		hit := false
		for _, c := range contracting {
			hit = hit || c.re.MatchString(stmt)
		}
		if !hit {
			t.Errorf("not seen as contracting: %s", stmt)
		}
	}
	for _, stmt := range []string{"ALTER TABLE payouts ADD COLUMN note TEXT", "CREATE INDEX x ON payouts (note)", "CREATE TABLE disputes (id TEXT PRIMARY KEY, n BIGINT NOT NULL)"} {
		for _, c := range contracting {
			if c.re.MatchString(stmt) {
				t.Errorf("seen as %s: %s", c.what, stmt)
			}
		}
	}
}

// stripComments removes "--" comments, so a comment's words are not read as SQL.
func stripComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
