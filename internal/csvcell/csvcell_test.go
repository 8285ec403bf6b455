package csvcell

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSafe: cells a spreadsheet would evaluate are defused, whatever comes
// before the formula character; phone numbers, negative numbers and plain
// values are left alone.
func TestSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"emp-1", "emp-1"},
		{"a=b", "a=b"},
		{"user@example.com", "user@example.com"},
		{"+25377000001", "+25377000001"},
		{"-12.5", "-12.5"},
		{"-500", "-500"},
		{"   ", "   "},
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"-1e5", "'-1e5"},
		{"-Inf", "'-Inf"},
		{"-", "'-"},
		{"-.", "'-."},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"\nx", "'\nx"},
		{";=cmd", "';=cmd"},
		{" =1+1", "' =1+1"},
		{",=1+1", "',=1+1"},
		{"|=1+1", "'|=1+1"},
		{" ;, |@SUM(A1)", "' ;, |@SUM(A1)"},
		{" -5", "' -5"},
		{"\u00a0=1", "'\u00a0=1"},
		{"\ufeff=1", "'\ufeff=1"},
		{"\u200b+1+1", "'\u200b+1+1"},
		{"＝1+1", "'＝1+1"},
		{"＋1", "'＋1"},
		{"－1", "'－1"},
		{"＠SUM(A1)", "'＠SUM(A1)"},
		{"；＝1", "'；＝1"},
		{"x;=1", "x;=1"},
	} {
		if got := Safe(c.in); got != c.want {
			t.Errorf("Safe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// evaluated is an independent statement of the rule: after optional blanks,
// format characters and separator-like punctuation, a formula character.
var evaluated = regexp.MustCompile(`^[\pZ\s\x0b\x{85}\p{Cf};,|:；，｜：]*[=+\-@＝＋－＠]`)

var signedNumber = regexp.MustCompile(`^[+-](\d+\.?\d*|\.\d+)$`)

// FuzzSafe: Safe either leaves a cell alone or prefixes one apostrophe; a
// cell left alone is never one a spreadsheet evaluates (except a plain signed
// number) and never starts with a tab, CR or LF; and the result survives a
// CSV round trip unchanged.
func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "x", "=1+1", ";=1", " =1", ",=1", "|=1", "-5", "+253770", "-2+3", "\t=1", "\r", "\n=1",
		"＝1", "\ufeff=1", "\u00a0@x", "a\n=1", "\xff=1", " \v=1", "\u0085=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Safe(s)
		if got != s && got != "'"+s {
			t.Fatalf("Safe(%q) = %q: neither unchanged nor apostrophe-prefixed", s, got)
		}
		if got == s {
			if s != "" && strings.ContainsRune("\t\r\n", rune(s[0])) {
				t.Fatalf("Safe(%q) left a leading control character", s)
			}
			if utf8.ValidString(s) && evaluated.MatchString(s) && !signedNumber.MatchString(s) {
				t.Fatalf("Safe(%q) left a cell a spreadsheet evaluates", s)
			}
		} else if !evaluated.MatchString(s) && !strings.ContainsRune("\t\r\n", rune(s[0])) {
			t.Fatalf("Safe(%q) defused a harmless cell", s)
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.Write([]string{got, "1"}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		rec, err := csv.NewReader(&buf).Read()
		if err != nil || len(rec) != 2 {
			t.Fatalf("round trip of %q: %v %q", got, err, rec)
		}
		if want := strings.ReplaceAll(got, "\r\n", "\n"); rec[0] != want && rec[0] != strings.ReplaceAll(want, "\r", "\n") {
			t.Fatalf("round trip of %q gave %q", got, rec[0])
		}
	})
}
