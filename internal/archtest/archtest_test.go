package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/payd/payd"

// floors places every package of the house, lowest first
// (docs/architecture.md, "Floors"). A package may import from a lower
// floor, and from its own floor only within its own room (the first path
// element under internal/: terminals and terminals/cardgateway are one room). A
// package takes the floor of its longest listed prefix; an internal package
// with none fails the check, so a new room is placed on purpose.
var floors = [][]string{
	// 0: pure: they import nothing of payd.
	{"internal/errs", "internal/ids", "internal/auth", "internal/secretbox", "internal/csvcell",
		"internal/terminals/dukpt", "internal/terminals/tlv", "internal/banking/iso20022", "internal/screening",
		"internal/providers/protocol", "internal/sdkgen", "internal/testutil", "internal/archtest", "internal/docscheck", "internal/tracing", "internal/statemachine", "internal/timestamp", "webhook"},
	// 1: shared vocabulary: money, pages, the provider adapter interfaces.
	{"internal/money", "internal/pagination", "internal/providers", "internal/card", "internal/httpx", "client", "internal/apidocs"},
	// 2: the database.
	{"internal/store"},
	// 3: plumbing every capability uses.
	{"internal/store/storetest", "internal/events", "internal/jobs", "internal/ledger", "internal/idempotency", "internal/requestlog"},
	// 4: merchants, the adapters, and the processes over the book.
	{"internal/merchants", "internal/providers/live", "internal/providers/sandbox", "internal/providers/sim",
		"internal/retention", "internal/reconciliation"},
	// 5: capabilities.
	{"internal/payments", "internal/payouts", "internal/webhooks", "internal/callbacks"},
	// 6: capabilities built on payments, and the other rails.
	{"internal/refunds", "internal/disputes", "internal/billing", "internal/reports", "internal/terminals", "internal/banking"},
	// 7: what serves a capability outside the API.
	{"internal/terminals/cardgateway", "internal/terminals/simulator", "internal/billing/hosted"},
	// 8: the HTTP fronts.
	{"internal/api", "internal/portal"},
	// 9: wiring.
	{"internal/app"},
	// 10: payd started whole, for tests and load scenarios, and the keyed
	// load that drives its processes and checks their database.
	{"internal/app/apptest", "internal/testutil/keyedload"},
	// 11: what starts payd and drives it from outside.
	{"cmd", "bench", "examples", "test", "tools"},
}

// upwardAllowed lists today's imports that run the wrong way, importer ->
// imported. The list only shrinks: an arrow not in it fails the check.
var upwardAllowed = map[string]bool{}

// initAllowed lists the files of internal/app that still wire a capability
// in an init function; the list only shrinks (it is empty: wire.go lists
// the steps).
var initAllowed = map[string]bool{}

// pkgFile is one parsed Go file with the package directory it belongs to.
type pkgFile struct {
	dir  string // relative to the module root, slash-separated
	name string
	test bool
	file *ast.File
	fset *token.FileSet
	src  []byte
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// parseModule parses every Go file of the module (testdata, vendored and
// hidden directories and node_modules left out).
func parseModule(t *testing.T, root string) []pkgFile {
	t.Helper()
	var out []pkgFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (n == "testdata" || n == "vendor" || n == "node_modules" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		out = append(out, pkgFile{dir: filepath.ToSlash(rel), name: filepath.Base(path), test: strings.HasSuffix(path, "_test.go"), file: f, fset: fset, src: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// imports returns the module packages f imports, relative to the module.
func (f pkgFile) imports() []string {
	var out []string
	for _, imp := range f.file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == module {
			out = append(out, ".")
		} else if rest, ok := strings.CutPrefix(p, module+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

// floorOf returns pkg's floor: that of its longest listed prefix.
func floorOf(pkg string) (floor int, ok bool) {
	best := -1
	for i, fl := range floors {
		for _, p := range fl {
			if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > best {
				best, floor, ok = len(p), i, true
			}
		}
	}
	return floor, ok
}

// room is a package's room: internal/<room>/…, or its first path element.
func room(pkg string) string {
	parts := strings.Split(pkg, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return "internal/" + parts[1]
	}
	return parts[0]
}

// checkFloors reports every import, in files other than tests, from a
// lower floor to a higher one, and from one room to another on one floor.
func checkFloors(files []pkgFile) []string {
	var bad []string
	seen := map[string]bool{}
	for _, f := range files {
		if f.test || f.dir == "." {
			continue
		}
		from, ok := floorOf(f.dir)
		if !ok {
			if room(f.dir) != "internal" && !strings.HasPrefix(f.dir, "internal/") {
				continue
			}
			if !seen[f.dir] {
				seen[f.dir] = true
				bad = append(bad, fmt.Sprintf("%s has no floor: place it in archtest's floors", f.dir))
			}
			continue
		}
		for _, imp := range f.imports() {
			to, ok := floorOf(imp)
			if !ok {
				continue // reported as the importer of its own files
			}
			arrow := f.dir + " -> " + imp
			if to < from || to == from && room(imp) == room(f.dir) || upwardAllowed[arrow] || seen[arrow] {
				continue
			}
			seen[arrow] = true
			bad = append(bad, fmt.Sprintf("%s/%s: %s imports %s (floor %d) from floor %d", f.dir, f.name, f.dir, imp, to, from))
		}
	}
	return bad
}

// checkIdempotency reports every importer of internal/idempotency, in files
// other than tests, outside api, portal and app: a capability or an adapter
// receives the request's claim as a value (store.Claim), and the wiring
// hands over the few functions of the package a worker needs.
func checkIdempotency(files []pkgFile) []string {
	var bad []string
	for _, f := range files {
		if f.test || !slices.Contains(f.imports(), "internal/idempotency") {
			continue
		}
		switch r := room(f.dir); {
		case r == "internal/api", r == "internal/portal", r == "internal/app", f.dir == "internal/idempotency",
			!strings.HasPrefix(f.dir, "internal/"):
			continue
		}
		bad = append(bad, fmt.Sprintf("%s/%s imports internal/idempotency: pass the unit of work explicitly", f.dir, f.name))
	}
	return bad
}

// contextFree lists the rooms whose code must not carry request state in a
// context: the plumbing over the store, the adapters and the capabilities.
// The request's unit of work and its claim reach an operation as values
// (store.Claim); the store alone joins a unit to its statements.
var contextFree = []string{"internal/idempotency", "internal/events", "internal/jobs", "internal/ledger", "internal/requestlog",
	"internal/merchants", "internal/providers", "internal/retention", "internal/reconciliation",
	"internal/payments", "internal/payouts", "internal/webhooks", "internal/callbacks",
	"internal/refunds", "internal/disputes", "internal/billing", "internal/reports", "internal/terminals", "internal/banking"}

// unitOwners are the packages that may carry a request's unit of work or
// claim in a context: the store (which marks a unit's context, NewUnit),
// the idempotency package that owns the unit, and the two fronts that run
// requests under it.
var unitOwners = map[string]bool{"internal/store": true, "internal/idempotency": true, "internal/api": true, "internal/portal": true}

// unitsInContexts reports, in f, a unit of work made (NewUnit), or a unit or
// claim put in or read from a context (a key named for one).
func unitsInContexts(f pkgFile) []string {
	var bad []string
	ast.Inspect(f.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		var key ast.Expr
		switch {
		case sel.Sel.Name == "NewUnit":
			bad = append(bad, fmt.Sprintf("%s/%s:%d: a unit of work made outside the store, idempotency and the fronts: take the request's store.Claim",
				f.dir, f.name, f.fset.Position(n.Pos()).Line))
			return true
		case sel.Sel.Name == "Value" && len(call.Args) == 1:
			key = call.Args[0]
		case sel.Sel.Name == "WithValue" && len(call.Args) == 3:
			key = call.Args[1]
		default:
			return true
		}
		k := strings.ToLower(string(f.src[f.fset.Position(key.Pos()).Offset:f.fset.Position(key.End()).Offset]))
		if strings.Contains(k, "unit") || strings.Contains(k, "claim") {
			bad = append(bad, fmt.Sprintf("%s/%s:%d: a unit of work or claim in a context: pass the store.Claim (or its store.Work) as a value",
				f.dir, f.name, f.fset.Position(n.Pos()).Line))
		}
		return true
	})
	return bad
}

// checkContextValues reports, in the files (not tests) of the contextFree
// rooms, every read or write of a context value (ctx.Value(key),
// context.WithValue), and anywhere outside the store a reference to a
// store function that finds the unit of work in a context.
func checkContextValues(files []pkgFile) []string {
	var bad []string
	for _, f := range files {
		if f.dir == "internal/store" || f.test {
			continue
		}
		free := slices.ContainsFunc(contextFree, func(r string) bool { return f.dir == r || strings.HasPrefix(f.dir, r+"/") })
		if !unitOwners[f.dir] {
			bad = append(bad, unitsInContexts(f)...)
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			line := f.fset.Position(n.Pos()).Line
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" && strings.HasPrefix(sel.Sel.Name, "Unit") && strings.HasSuffix(sel.Sel.Name, "From") {
				bad = append(bad, fmt.Sprintf("%s/%s:%d: store.%s reads the unit of work from a context: take it as a value", f.dir, f.name, line, sel.Sel.Name))
			}
			if !free {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "context" && sel.Sel.Name == "WithValue" {
				bad = append(bad, fmt.Sprintf("%s/%s:%d: context.WithValue in a capability: pass the value explicitly", f.dir, f.name, line))
			}
			return true
		})
		if !free {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Value" {
				bad = append(bad, fmt.Sprintf("%s/%s:%d: a context value read in a capability: take the unit of work, the claim or the setting as a value",
					f.dir, f.name, f.fset.Position(n.Pos()).Line))
			}
			return true
		})
	}
	return bad
}

// checkEngineBranches reports, in every file (tests too) outside the store
// package itself, a comparison or a switch on which engine runs: the
// engine's flags and named operations (store.Engine) say what differs.
func checkEngineBranches(files []pkgFile) []string {
	var bad []string
	for _, f := range files {
		if f.dir == "internal/store" {
			continue
		}
		text := func(n ast.Node) string {
			return string(f.src[f.fset.Position(n.Pos()).Offset:f.fset.Position(n.End()).Offset])
		}
		isEngineValue := func(e ast.Expr) bool {
			if sel, ok := e.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" && (sel.Sel.Name == "SQLite" || sel.Sel.Name == "Postgres") {
					return true
				}
			}
			return false
		}
		asksEngine := func(e ast.Expr) bool {
			s := text(e)
			return strings.Contains(s, "Dialect()") || strings.Contains(s, "Engine()")
		}
		isEngineName := func(e ast.Expr) bool {
			lit, ok := e.(*ast.BasicLit)
			return ok && lit.Kind == token.STRING && (lit.Value == `"sqlite"` || lit.Value == `"postgres"`)
		}
		report := func(n ast.Node) {
			bad = append(bad, fmt.Sprintf("%s/%s:%d: branch on the engine (%s): ask a store.Engine flag or named operation", f.dir, f.name, f.fset.Position(n.Pos()).Line, text(n)))
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				if isEngineValue(n.X) || isEngineValue(n.Y) ||
					(isEngineName(n.X) && asksEngine(n.Y)) || (isEngineName(n.Y) && asksEngine(n.X)) {
					report(n)
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && asksEngine(n.Tag) {
					report(n.Tag)
					return true
				}
				for _, s := range n.Body.List {
					for _, e := range s.(*ast.CaseClause).List {
						if isEngineValue(e) {
							report(e)
						}
					}
				}
			}
			return true
		})
	}
	return bad
}

// checkAppInit reports every init function in internal/app: the wiring is
// one ordered list (wire.go), not file order.
func checkAppInit(files []pkgFile) []string {
	var bad []string
	for _, f := range files {
		if f.dir != "internal/app" {
			continue
		}
		for _, d := range f.file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" && !initAllowed[f.name] {
				bad = append(bad, fmt.Sprintf("%s/%s:%d: func init in internal/app: add the step to wire()", f.dir, f.name, f.fset.Position(fn.Pos()).Line))
			}
		}
	}
	return bad
}

// checkAllowLists reports entries of the allow-lists that no longer match
// anything, so the lists shrink as the violations go.
func checkAllowLists(files []pkgFile) []string {
	var bad []string
	arrows := map[string]bool{}
	inits := map[string]bool{}
	for _, f := range files {
		if f.dir == "internal/app" {
			for _, d := range f.file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
					inits[f.name] = true
				}
			}
		}
		if f.test {
			continue
		}
		for _, imp := range f.imports() {
			arrows[f.dir+" -> "+imp] = true
		}
	}
	for name := range initAllowed {
		if !inits[name] {
			bad = append(bad, fmt.Sprintf("internal/app/%s has no init any more: remove it from initAllowed", name))
		}
	}
	for a := range upwardAllowed {
		if !arrows[a] {
			bad = append(bad, fmt.Sprintf("%s is gone: remove it from upwardAllowed", a))
		}
	}
	return bad
}

func TestStructure(t *testing.T) {
	files := parseModule(t, moduleRoot(t))
	if len(files) < 100 {
		t.Fatalf("found only %d Go files", len(files))
	}
	for _, c := range []struct {
		name  string
		check func([]pkgFile) []string
	}{
		{"floors", checkFloors},
		{"idempotency", checkIdempotency},
		{"engine branches", checkEngineBranches},
		{"context values", checkContextValues},
		{"init in app", checkAppInit},
		{"allow-lists", checkAllowLists},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := c.check(files)
			sort.Strings(bad)
			for _, b := range bad {
				t.Error(b)
			}
		})
	}
}

// TestChecksCatchViolations feeds each check a made-up file that breaks its
// rule, so the structure check is known to be able to fail.
func TestChecksCatchViolations(t *testing.T) {
	parse := func(dir, name, src string) pkgFile {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		return pkgFile{dir: dir, name: name, test: strings.HasSuffix(name, "_test.go"), file: f, fset: fset, src: []byte(src)}
	}
	for _, c := range []struct {
		name  string
		check func([]pkgFile) []string
		file  pkgFile
		want  int
	}{
		{"upward import", checkFloors, parse("internal/ledger", "x.go", `package ledger
import _ "github.com/payd/payd/internal/payments"`), 1},
		{"same floor, other room", checkFloors, parse("internal/payments", "x.go", `package payments
import _ "github.com/payd/payd/internal/payouts"`), 1},
		{"same room", checkFloors, parse("internal/terminals/simulator", "x.go", `package simulator
import _ "github.com/payd/payd/internal/terminals/cardgateway"`), 0},
		{"a package without a floor", checkFloors, parse("internal/newroom", "x.go", `package newroom`), 1},
		{"idempotency in a capability", checkIdempotency, parse("internal/webhooks", "x.go", `package webhooks
import _ "github.com/payd/payd/internal/idempotency"`), 1},
		{"idempotency in an adapter", checkIdempotency, parse("internal/providers/sandbox", "x.go", `package sandbox
import _ "github.com/payd/payd/internal/idempotency"`), 1},
		{"idempotency in the API", checkIdempotency, parse("internal/api", "x.go", `package api
import _ "github.com/payd/payd/internal/idempotency"`), 0},
		{"engine branches", checkEngineBranches, parse("internal/ledger", "x_test.go", `package ledger
func f() {
	if db.Dialect() == store.Postgres {}
	if tx.Dialect() != store.SQLite {}
	if db.Engine().Name() == "postgres" {}
	switch db.Dialect() {}
	switch d { case store.SQLite: }
	if db.Engine().ConcurrentWriters() {}
}`), 5},
		{"engine branches inside the store", checkEngineBranches, parse("internal/store", "x.go", `package store
func f() { if d == store.Postgres {} }`), 0},
		{"unit from a context", checkContextValues, parse("internal/payments", "x.go", `package payments
func f() {
	_ = store.UnitFrom(ctx)
	_ = ctx.Value(unitKey{})
	_ = context.WithValue(ctx, k{}, 1)
}`), 4},
		{"unit from a context in the API", checkContextValues, parse("internal/api", "x.go", `package api
func f() { _ = store.UnitFrom(ctx); _ = ctx.Value(claimKey{}) }`), 1},
		{"a claim in a context outside the fronts", checkContextValues, parse("internal/app", "x.go", `package app
func f() {
	ctx = context.WithValue(ctx, claimKey{}, c)
	_ = ctx.Value(unitKey{})
	_, _ = db.NewUnit(ctx, store.UnitHooks{})
	_ = ctx.Value(loggerKey{})
}`), 3},
		{"init in app", checkAppInit, parse("internal/app", "wire_new.go", `package app
func init() {}`), 1},
	} {
		if got := len(c.check([]pkgFile{c.file})); got != c.want {
			t.Errorf("%s: %d reports, want %d", c.name, got, c.want)
		}
	}
}
