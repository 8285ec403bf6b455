package screening

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var evalOnce struct {
	sync.Once
	list *List
	err  error
}

// evalListPath is the small OFAC-format list shipped with the package
// (testdata/evallist, entries taken from the 2021 SDN list; see
// testdata/README.md).
func evalListPath() string { return filepath.Join("testdata", "evallist", "sdn.csv") }

// evalList loads testdata/evallist once per test binary.
func evalList(t testing.TB) *List {
	t.Helper()
	evalOnce.Do(func() { evalOnce.list, evalOnce.err = Load(context.Background(), evalListPath()) })
	if evalOnce.err != nil {
		t.Fatal(evalOnce.err)
	}
	return evalOnce.list
}

// Obfuscation is one row of testdata/obfuscations.csv: a listed name
// disguised the way an evader would, and the entry it must still hit. The
// payout and transfer tests read the same file.
type obfuscation struct {
	kind, name string
	entry      int
}

func readObfuscations(t testing.TB) []obfuscation {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "obfuscations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []obfuscation
	for _, r := range rows[1:] {
		id, err := strconv.Atoi(r[2])
		if err != nil {
			t.Fatal(err)
		}
		name, err := strconv.Unquote(`"` + r[1] + `"`)
		if err != nil {
			t.Fatalf("obfuscations.csv %q: %v", r[1], err)
		}
		out = append(out, obfuscation{kind: r[0], name: name, entry: id})
	}
	return out
}

func TestObfuscationsHit(t *testing.T) {
	l := evalList(t)
	for _, o := range readObfuscations(t) {
		t.Run(o.kind, func(t *testing.T) {
			r := l.Screen(o.name, Options{})
			if r.Status != StatusHit || !hasEntry(r, o.entry) {
				t.Fatalf("Screen(%q) = %s %+v, want a hit on %d (normalised %q)", o.name, r.Status, r.Matches, o.entry, Normalize(o.name))
			}
		})
	}
}

// TestObfuscationsCoverEveryKind: the file the screening, payout and
// transfer tests share holds every disguise payd must catch, each written
// with the characters it names, so that removing one from the file fails
// here rather than silently narrowing all three tests.
func TestObfuscationsCoverEveryKind(t *testing.T) {
	obs := readObfuscations(t)
	has := func(kind string, test func(rune) bool) {
		t.Helper()
		for _, o := range obs {
			if strings.Contains(o.kind, kind) {
				for _, r := range o.name {
					if test(r) {
						return
					}
				}
			}
		}
		t.Errorf("obfuscations.csv has no %q row written with those characters", kind)
	}
	in := func(lo, hi rune) func(rune) bool { return func(r rune) bool { return r >= lo && r <= hi } }
	has("soft hyphen", in('\u00AD', '\u00AD'))
	has("zero-width space", in('\u200B', '\u200B'))
	has("zero-width joiner and non-joiner", in('\u200C', '\u200D'))
	has("hyphens inside words", in('-', '-'))
	has("full-width", in('\uFF01', '\uFF5E'))
	has("Cyrillic homoglyph", in('\u0400', '\u04FF'))
	has("Greek homoglyph", in('\u0370', '\u03FF'))
	has("letters separated by hyphens", in('-', '-'))
	has("letters separated by spaces", in(' ', ' '))
	has("letters separated by underscores", in('_', '_'))
	has("letters separated by tildes", in('~', '~'))
	has("letters separated by asterisks", in('*', '*'))
	has("surname first", in(' ', ' '))
}

func TestNormalizeRemovesInvisibleAndFolds(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Usa\u00ADma", "USAMA"},
		{"Usa\u200Bma", "USAMA"},
		{"Us\u2060a\uFEFFma\uFE0F", "USAMA"},
		{"Ｕｓａｍａ", "USAMA"},
		{"Us\u0430m\u0430", "USAMA"},  // Cyrillic а in a Latin word
		{"\u0397ASSAN", "HASAN"},      // Greek Η
		{"Усама", "USAMA"},            // a Cyrillic word is transliterated, not read as lookalikes
		{"Вова Bob", "VOVA BOB"},      // ... also beside Latin words when it has letters without lookalikes
		{"ВОВ Bob", "BOB BOB"},        // a word of lookalikes only, in a Latin name, is disguise
		{"ﬁfi", "FIFI"},               // ligature
		{"Jean-Pierre", "JEAN PIERE"}, // split, as before
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
