// Package statemachinetest is the one check every state machine's package
// runs on its table (statemachine.Table) and on its own SQL.
package statemachinetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/payd/payd/internal/statemachine"
)

// handWritten matches, in an UPDATE statement, a condition on a status
// column written by hand: "WHERE status = 'x'", "AND status IN ('x', …)".
var handWritten = regexp.MustCompile(`(?i)(WHERE|AND)\s+(\w+\.)?status\s*(=|IN)\s*\(?\s*'`)

// Check fails t when table is wrong (statemachine.Table.Check: unreachable
// states, exits from terminal states, unnamed or duplicate moves), when a
// move's compare-and-set condition does not list exactly its source states,
// or when a Go file (not a test) of the package in the current directory
// writes an UPDATE of table's rows whose status condition is hand-written
// instead of taken from the table (Move.Cond, Table.Cond, Move.Args). sqlTable
// names the SQL table ("refunds"); an UPDATE of another table is not the
// machine's.
func Check[S ~string](t testing.TB, table *statemachine.Table[S], sqlTable string) {
	t.Helper()
	if err := table.Check(); err != nil {
		t.Error(err)
	}
	for _, m := range table.Moves {
		want := make([]string, len(m.From))
		for i, f := range m.From {
			want[i] = "'" + string(f) + "'"
		}
		if got := m.Cond(); got != "status IN ("+strings.Join(want, ", ")+")" {
			t.Errorf("%s: move %s: condition %q does not list its source states %v", table.Name, m.Name, got, m.From)
		}
		if len(m.Args()) != len(m.From) {
			t.Errorf("%s: move %s: %d arguments for %d source states", table.Name, m.Name, len(m.Args()), len(m.From))
		}
	}
	for _, bad := range HandWritten(t, ".", sqlTable) {
		t.Errorf("%s: %s", table.Name, bad)
	}
}

// HandWritten lists the string constants, in the Go files (not tests) of
// dir, that change the status of sqlTable's rows under a hand-written status
// condition (a guard on a statement that does not change the status is not
// a move).
func HandWritten(t testing.TB, dir, sqlTable string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	// A status change: UPDATE <table> SET status = …
	update := regexp.MustCompile(`(?is)UPDATE\s+` + regexp.QuoteMeta(sqlTable) + `\s+SET\s+status\s*=`)
	var bad []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if update.MatchString(s) && handWritten.MatchString(s) {
				bad = append(bad, fset.Position(lit.Pos()).String()+": an UPDATE of "+sqlTable+
					" with a hand-written status condition: take it from the table")
			}
			return true
		})
	}
	return bad
}
