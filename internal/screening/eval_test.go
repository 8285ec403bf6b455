package screening

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Recall and false-positive rate measured on testdata/eval_pairs.csv against
// the shipped list testdata/evallist at DefaultThreshold, and recorded in
// docs/screening.md. The test fails when recall falls below or the
// false-positive rate rises above them; when a change improves them, raise
// these figures and the document. The goal is recall of at least 0.95 at a
// false-positive rate of at most 0.02; the test also fails below that.
const (
	evalRecall = 0.989
	evalFPR    = 0.007
)

// TestEvaluation prints recall and false-positive rate per category with -v:
//
//	go test -run TestEvaluation -v ./internal/screening/
//
// (or go run ./internal/screening/cmd/eval from the repository root).
func TestEvaluation(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "eval_pairs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pairs, err := ReadEvalPairs(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) < 200 {
		t.Fatalf("%d labelled pairs, want at least 200", len(pairs))
	}
	res := Evaluate(evalList(t), pairs, Options{})
	for c, n := range res.ByCategory {
		t.Logf("%-45s %3d/%-3d correct", c, n[1], n[0])
	}
	for _, p := range res.Missed {
		t.Logf("missed: %q (entry %d, %s)", p.Query, p.Entry, p.Category)
	}
	for _, p := range res.Flagged {
		t.Logf("false hit: %q (%s)", p.Query, p.Category)
	}
	t.Logf("%d pairs: recall %.3f (%d/%d), false-positive rate %.3f (%d/%d)", len(pairs),
		res.Recall(), res.Found, res.Positives, res.FalsePositiveRate(), res.FalseHits, res.Negatives)
	if res.Recall() < 0.95 || res.FalsePositiveRate() > 0.02 {
		t.Errorf("recall %.3f at false-positive rate %.3f: the goal is recall >= 0.95 at <= 0.02", res.Recall(), res.FalsePositiveRate())
	}
	if res.Recall() < evalRecall-1e-9 || res.FalsePositiveRate() > evalFPR+1e-9 {
		t.Errorf("recall %.3f, false-positive rate %.3f; documented %.3f and %.3f", res.Recall(), res.FalsePositiveRate(), evalRecall, evalFPR)
	}
}

func TestReadEvalPairsErrors(t *testing.T) {
	for _, in := range []string{"", "q,e,c,n\nx,1,c\n", "q,e,c,n\nx,one,c,n\n", "q,e,c,n\n\\uZZ,1,c,n\n"} {
		if _, err := ReadEvalPairs(stringsReader(in)); err == nil {
			t.Errorf("ReadEvalPairs(%q): no error", in)
		}
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// readEveryday reads testdata/everyday_names.csv: everyday names of many
// countries (entry 0), none of which should hit.
func readEveryday(t *testing.T) []EvalPair {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "everyday_names.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := ReadEvalPairs(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 1000 {
		t.Fatalf("%d everyday names, want at least 1,000", len(ps))
	}
	for _, p := range ps {
		if p.Positive() {
			t.Fatalf("everyday name %q names entry %d", p.Query, p.Entry)
		}
	}
	return ps
}

// everydayFPR is the documented false-positive rate of the everyday names on
// the full 2021 list (docs/screening.md); the goal is at most 0.01.
const everydayFPR = 0.0068

// TestEverydayNames: at most 1 % of 1,780 everyday names of 24 countries and
// the commonest US full names hit the full list (and none the evaluation
// list), while the labelled set keeps its recall (TestEvaluation,
// TestLabelledPrecisionRecall).
func TestEverydayNames(t *testing.T) {
	ps := readEveryday(t)
	if res := Evaluate(evalList(t), ps, Options{}); res.FalseHits > 0 {
		t.Errorf("%d everyday names hit the evaluation list: %v", res.FalseHits, res.Flagged)
	}
	res := Evaluate(fullList(t), ps, Options{})
	for _, p := range res.Flagged {
		t.Logf("false hit: %q (%s)", p.Query, p.Category)
	}
	t.Logf("everyday names: false-positive rate %.4f (%d/%d)", res.FalsePositiveRate(), res.FalseHits, res.Negatives)
	if res.FalsePositiveRate() > 0.01 || res.FalsePositiveRate() > everydayFPR+1e-9 {
		t.Errorf("false-positive rate %.4f; goal 0.01, documented %.4f", res.FalsePositiveRate(), everydayFPR)
	}
}
