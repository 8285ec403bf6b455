package screening

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The helpers below are for tuning, not tests: each runs only when its
// environment variable is set, and prints instead of asserting.
//
//	PAYD_SCREENING_TUNE=1     scores of every labelled name and precision/recall per threshold
//	PAYD_SCREENING_EXPLAIN='name;name'  normalised form and best matches of each name

func TestTuneReport(t *testing.T) {
	if os.Getenv("PAYD_SCREENING_TUNE") == "" {
		t.Skip("set PAYD_SCREENING_TUNE=1 to print the labelled scores")
	}
	l := fullList(t)
	rows := readLabelled(t)
	for _, r := range rows {
		best, name := 0.0, ""
		if ms := l.search(newQuery(r.name), 0.0001, defaultScoring); len(ms) > 0 {
			best, name = ms[0].Score, ms[0].MatchedName
		}
		expected := StatusClear
		if r.hit {
			expected = StatusHit
		}
		fmt.Printf("%-5s %.3f %-40s | %s\n", expected, best, r.name, name)
	}
	for th := 0.70; th < 0.955; th += 0.01 {
		c := evaluate(l, rows, th, defaultScoring)
		fmt.Printf("threshold %.2f precision %.3f recall %.3f false positives %d false negatives %d\n",
			th, c.precision(), c.recall(), c.falsePos, c.falseNeg)
	}
}

func TestExplainReport(t *testing.T) {
	names := os.Getenv("PAYD_SCREENING_EXPLAIN")
	if names == "" {
		t.Skip("set PAYD_SCREENING_EXPLAIN='name;name' to explain scores")
	}
	l := fullList(t)
	for _, n := range strings.Split(names, ";") {
		fmt.Printf("%q -> %q\n", n, Normalize(n))
		for _, m := range l.search(newQuery(n), 0.3, defaultScoring) {
			e, _ := l.Entry(m.EntryID)
			fmt.Printf("   %.3f %s | %s | %q\n", m.Score, m.MatchedName, m.ListName, Normalize(e.Name))
		}
	}
}
