package reports

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestEveryLedgerKindIsMapped reads every non-test Go file under internal/
// for the kinds of ledger transaction payd posts and fails when kindTypes
// does not map one. It finds a kind where a ledger.Transaction literal sets
// Kind: a string literal, a constant, or a parameter of the enclosing
// function (then every call of that function in the package supplies it),
// and the kinds the ledger package itself writes in SQL.
func TestEveryLedgerKindIsMapped(t *testing.T) {
	found := ledgerKinds(t, "..")
	for _, k := range []string{"payment_succeeded", "sandbox_topup", "payout_reserve", "payout_batch_reserve", "payout_paid", "payout_failed", "payout_canceled",
		"transfer_settlement", "transfer_accept", "transfer_release", "transfer_return", "sandbox_carry_forward"} {
		if !found[k] {
			t.Errorf("the scan did not find the kind %q: it no longer reads the code base correctly", k)
		}
	}
	var missing []string
	for k := range found {
		if _, ok := kindTypes[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("ledger transaction kinds with no balance transaction type in kindTypes (reports/kinds.go): %s", strings.Join(missing, ", "))
	}
}

// TestKindFilterPartitions: each kind is in exactly one type's filter.
func TestKindFilterPartitions(t *testing.T) {
	for k, want := range kindTypes {
		n := 0
		for _, typ := range Types {
			in, notIn := kindFilter(typ)
			if contains(in, k) || (typ == TypeAdjustment && !contains(notIn, k)) {
				n++
				if typ != want {
					t.Errorf("kind %s is in the filter of %s, mapped to %s", k, typ, want)
				}
			}
		}
		if n != 1 {
			t.Errorf("kind %s is in %d types' filters", k, n)
		}
	}
	if TypeOf("some_new_kind") != TypeAdjustment {
		t.Error("an unknown kind is not an adjustment")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// pkgFiles is one directory's parsed non-test files.
type pkgFiles struct {
	files  []*ast.File
	consts map[string]string // string constants by name
}

// ledgerKinds scans root for the ledger kinds payd posts.
func ledgerKinds(t *testing.T, root string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string]*pkgFiles{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkgFiles{consts: map[string]string{}}
			pkgs[dir] = p
		}
		p.files = append(p.files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	sqlKind := regexp.MustCompile(`(?s)INSERT INTO ledger_transactions \(id, merchant_id, livemode, kind,.*?VALUES \([^,]+,[^,]+,[^,]+,\s*'([a-z_]+)'`)
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := stringLit(vs.Values[i]); ok {
								p.consts[n.Name] = v
							}
						}
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						for _, m := range sqlKind.FindAllStringSubmatch(s, -1) {
							found[m[1]] = true
						}
					}
				}
				return true
			})
		}
		for _, f := range p.files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					cl, ok := n.(*ast.CompositeLit)
					if !ok || !isLedgerTransaction(cl.Type) {
						return true
					}
					for _, el := range cl.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "Kind" {
							for _, k := range p.resolve(t, fset, fn, kv.Value, 0) {
								found[k] = true
							}
						}
					}
					return true
				})
			}
		}
	}
	return found
}

func isLedgerTransaction(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "ledger" && x.Sel.Name == "Transaction"
	case *ast.Ident:
		return x.Name == "Transaction"
	}
	return false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// resolve returns the kinds expression e can hold inside fn: a literal, a
// constant, or, for a parameter of fn, whatever the package's calls of fn
// pass in its place.
func (p *pkgFiles) resolve(t *testing.T, fset *token.FileSet, fn *ast.FuncDecl, e ast.Expr, depth int) []string {
	if s, ok := stringLit(e); ok {
		return []string{s}
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		t.Errorf("%s: a ledger Kind the scan cannot read", fset.Position(e.Pos()))
		return nil
	}
	if v, ok := p.consts[id.Name]; ok {
		return []string{v}
	}
	idx, i := -1, 0
	for _, field := range fn.Type.Params.List {
		for _, n := range field.Names {
			if n.Name == id.Name {
				idx = i
			}
			i++
		}
	}
	if idx < 0 || depth > 3 {
		t.Errorf("%s: the ledger Kind %s is neither a constant nor a parameter of %s", fset.Position(e.Pos()), id.Name, fn.Name.Name)
		return nil
	}
	var out []string
	for _, f := range p.files {
		for _, d := range f.Decls {
			caller, ok := d.(*ast.FuncDecl)
			if !ok || caller.Body == nil {
				continue
			}
			ast.Inspect(caller.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) <= idx {
					return true
				}
				var name string
				switch c := call.Fun.(type) {
				case *ast.Ident:
					name = c.Name
				case *ast.SelectorExpr:
					name = c.Sel.Name
				}
				if name == fn.Name.Name {
					out = append(out, p.resolve(t, fset, caller, call.Args[idx], depth+1)...)
				}
				return true
			})
		}
	}
	if len(out) == 0 {
		t.Errorf("%s: no call of %s supplies its ledger Kind", fset.Position(e.Pos()), fn.Name.Name)
	}
	return out
}
