package screening

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The helpers below are for tuning, not tests: each runs only when its
// environment variable is set, and prints instead of asserting.
//
//	PAYD_SCREENING_TUNE=1     scores of every labelled name and precision/recall per threshold
//	PAYD_SCREENING_EXPLAIN='name;name'  normalised form and best matches of each name
//	PAYD_SCREENING_SCORING='wordFloor=0.88 wordPenalty=2'  try other scoring constants in both

func TestTuneReport(t *testing.T) {
	if os.Getenv("PAYD_SCREENING_TUNE") == "" {
		t.Skip("set PAYD_SCREENING_TUNE=1 to print the labelled scores")
	}
	l := fullList(t)
	rows := readLabelled(t)
	sc := tuneScoring(t)
	for _, r := range rows {
		best, name := 0.0, ""
		if ms, _ := l.screen(r.name, 0.0001, sc); len(ms) > 0 {
			best, name = ms[0].Score, ms[0].MatchedName
		}
		expected := StatusClear
		if r.hit {
			expected = StatusHit
		}
		fmt.Printf("%-5s %.3f %-40s | %s\n", expected, best, r.name, name)
	}
	for th := 0.70; th < 0.955; th += 0.01 {
		c := evaluate(l, rows, th, sc)
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
		ms, _ := l.screen(n, 0.3, tuneScoring(t))
		for _, m := range ms {
			e, _ := l.Entry(m.EntryID)
			fmt.Printf("   %.3f %s | %s | %q %v\n", m.Score, m.MatchedName, m.ListName, Normalize(e.Name), m.Explanation)
		}
	}
}

// tuneScoring returns defaultScoring with the overrides of
// PAYD_SCREENING_SCORING ("name=value" pairs separated by spaces).
func tuneScoring(t *testing.T) scoring {
	sc := defaultScoring
	fields := map[string]*float64{
		"wordFloor": &sc.wordFloor, "offsetFloor": &sc.offsetFloor, "vowelFactor": &sc.vowelFactor, "frameFactor": &sc.frameFactor,
		"wordPenalty": &sc.wordPenalty, "queryShare": &sc.queryShare, "minShared": &sc.minShared,
		"contained": &sc.contained, "fuzzyCommon": &sc.fuzzyCommon, "exactCommon": &sc.exactCommon,
	}
	for _, kv := range strings.Fields(os.Getenv("PAYD_SCREENING_SCORING")) {
		k, v, _ := strings.Cut(kv, "=")
		f, ok := fields[k]
		if !ok {
			t.Fatalf("PAYD_SCREENING_SCORING: unknown constant %q", k)
		}
		if _, err := fmt.Sscan(v, f); err != nil {
			t.Fatalf("PAYD_SCREENING_SCORING: %s: %v", kv, err)
		}
	}
	return sc
}

// TestExplainEvaluation prints, for every miss and false hit of the
// evaluation set, the normalised query, the expected entry's names
// normalised with their score, and the best matches:
//
//	PAYD_SCREENING_EXPLAIN_EVAL=1 go test -run TestExplainEvaluation -v ./internal/screening/
func TestExplainEvaluation(t *testing.T) {
	if os.Getenv("PAYD_SCREENING_EXPLAIN_EVAL") == "" {
		t.Skip("set PAYD_SCREENING_EXPLAIN_EVAL=1 to explain the evaluation's misses and false hits")
	}
	f, err := os.Open("testdata/eval_pairs.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pairs, err := ReadEvalPairs(f)
	if err != nil {
		t.Fatal(err)
	}
	l := evalList(t)
	res := Evaluate(l, pairs, Options{})
	sc := tuneScoring(t)
	for _, p := range append(res.Missed, res.Flagged...) {
		fmt.Printf("%s %q (%s) -> %q\n", map[bool]string{true: "MISS", false: "FALSE HIT"}[p.Positive()], p.Query, p.Category, Normalize(p.Query))
		ms, _ := l.screen(p.Query, 0.3, sc)
		for _, m := range ms {
			fmt.Printf("   %.3f %d %s | %q\n", m.Score, m.EntryID, m.MatchedName, Normalize(m.MatchedName))
		}
		if p.Positive() {
			e, _ := l.Entry(p.Entry)
			fmt.Printf("   want %d: %q", p.Entry, Normalize(e.Name))
			for _, a := range e.Aliases {
				fmt.Printf(" / %q", Normalize(a.Name))
			}
			fmt.Println()
		}
	}
}

// TestExplainEvalNames explains names against the evaluation list:
//
//	PAYD_SCREENING_EXPLAIN_EVALNAMES='name;name' go test -run TestExplainEvalNames -v ./internal/screening/
func TestExplainEvalNames(t *testing.T) {
	names := os.Getenv("PAYD_SCREENING_EXPLAIN_EVALNAMES")
	if names == "" {
		t.Skip("set PAYD_SCREENING_EXPLAIN_EVALNAMES='name;name' to explain scores against the evaluation list")
	}
	l := evalList(t)
	for _, n := range strings.Split(names, ";") {
		fmt.Printf("%q -> %q\n", n, Normalize(n))
		q := newQuery(n, false)
		for _, u := range q.units {
			l.words.reset()
			s := newScratch(len(l.idx.names), len(l.idx.terms), len(l.entries))
			s.begin()
			s.near = s.near[:0]
			for _, f := range u.forms {
				l.closeTermsOf(s, f, tuneScoring(t))
			}
			fmt.Printf("   unit %s:", u.key)
			for _, c := range s.near {
				fmt.Printf(" %s=%.3f", string(l.idx.terms[c.term].word), c.sim)
			}
			fmt.Println()
		}
		ms, _ := l.screen(n, 0.3, tuneScoring(t))
		for _, m := range ms {
			fmt.Printf("   %.3f %d %s | %q\n", m.Score, m.EntryID, m.MatchedName, Normalize(m.MatchedName))
		}
	}
}

// TestGeneralisationReport screens the latency helper's names and prints
// how many of the 5,000 perturbed listed names (typo, dropped or swapped
// words) and of the 5,000 invented names of the region hit: a check, on
// names nobody tuned on, that a change to the matcher generalises.
//
//	PAYD_SCREENING_GENERALISATION=1 go test -run TestGeneralisationReport -v ./internal/screening/
func TestGeneralisationReport(t *testing.T) {
	if os.Getenv("PAYD_SCREENING_GENERALISATION") == "" {
		t.Skip("set PAYD_SCREENING_GENERALISATION=1 to print the hit rates of perturbed listed and invented names")
	}
	l := fullList(t)
	names := latencyNames(l, 10_000)
	var listed, invented int
	for i, n := range names {
		if l.Screen(n, Options{}).Status != StatusHit {
			continue
		}
		if i%2 == 0 {
			listed++
		} else {
			invented++
		}
	}
	fmt.Printf("perturbed listed names hit: %d/%d (%.1f %%); invented names hit: %d/%d (%.1f %%)\n",
		listed, len(names)/2, 100*float64(listed)/float64(len(names)/2), invented, len(names)/2, 100*float64(invented)/float64(len(names)/2))
	arabic := arabicScriptNames(3000)
	hits := 0
	for _, n := range arabic {
		if l.Screen(n, Options{}).Status == StatusHit {
			hits++
		}
	}
	fmt.Printf("invented names in Arabic script hit: %d/%d (%.1f %%)\n", hits, len(arabic), 100*float64(hits)/float64(len(arabic)))
}

// arabicScriptNames returns n names written in Arabic script, half of two
// words and half of three, drawn from common given names and family names
// of Djibouti, Somalia and the Arab world: names as payees write them, most
// of them not listed (some are collisions with listed names, as in Latin).
func arabicScriptNames(n int) []string {
	given := strings.Fields("محمد أحمد علي حسن حسين عمر عثمان يوسف إبراهيم عبدالله فاطمة عائشة خديجة مريم سعيد خالد محمود مصطفى آمنة زينب سلمى نور ياسين إسماعيل موسى عيسى داود سليمان")
	family := strings.Fields("فارح جامع ديني حرسي عيلمي عبدي يوسف كامل برخد روبله واعيس غيله دوالي وارسامه عدن الحسيني البكري التميمي الشمري القحطاني العتيبي المصري الشامي الحلبي")
	rng := rand.New(rand.NewPCG(3, 4))
	out := make([]string, 0, n)
	for i := range n {
		name := given[rng.IntN(len(given))] + " " + given[rng.IntN(len(given))] + " " + family[rng.IntN(len(family))]
		if i%2 == 0 {
			name = given[rng.IntN(len(given))] + " " + family[rng.IntN(len(family))]
		}
		out = append(out, name)
	}
	return out
}
