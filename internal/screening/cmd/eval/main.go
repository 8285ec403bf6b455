// Command eval screens the labelled evaluation set against a list and prints
// recall and false-positive rate, per category and in total:
//
//	go run ./internal/screening/cmd/eval
//	go run ./internal/screening/cmd/eval -list /path/to/sdn.csv -pairs pairs.csv -threshold 0.85
//
// By default it uses the small OFAC-format list and the set shipped in
// internal/screening/testdata (run it from the repository root).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/payd/payd/internal/screening"
)

func main() {
	dir := filepath.Join("internal", "screening", "testdata")
	list := flag.String("list", filepath.Join(dir, "evallist", "sdn.csv"), "sdn.csv of the list to screen against")
	pairs := flag.String("pairs", filepath.Join(dir, "eval_pairs.csv"), "labelled pairs (query,entry,category,note)")
	everyday := flag.String("everyday", filepath.Join(dir, "everyday_names.csv"), "everyday names that must not hit (same format, entry 0); empty to skip")
	threshold := flag.Float64("threshold", screening.DefaultThreshold, "score at or above which a listed name is a hit")
	flag.Parse()
	if err := run(*list, *pairs, *everyday, *threshold); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func readPairs(path string) ([]screening.EvalPair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return screening.ReadEvalPairs(f)
}

func run(listPath, pairsPath, everydayPath string, threshold float64) (err error) {
	l, err := screening.Load(context.Background(), listPath)
	if err != nil {
		return err
	}
	ps, err := readPairs(pairsPath)
	if err != nil {
		return err
	}
	if everydayPath != "" {
		// The everyday names are reported on their own below, after the
		// labelled set, so that their number does not swamp its figures.
		defer func() {
			if err == nil {
				err = runEveryday(l, everydayPath, threshold)
			}
		}()
	}
	res := screening.Evaluate(l, ps, screening.Options{Threshold: threshold})
	cats := make([]string, 0, len(res.ByCategory))
	for c := range res.ByCategory {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	fmt.Printf("list %s: %d entries, %d aliases; threshold %.2f\n", listPath, l.Size(), l.AliasCount(), threshold)
	for _, c := range cats {
		n := res.ByCategory[c]
		fmt.Printf("  %-45s %3d/%-3d correct\n", c, n[1], n[0])
	}
	for _, p := range res.Missed {
		fmt.Printf("missed:    %q (entry %d, %s)\n", p.Query, p.Entry, p.Category)
	}
	for _, p := range res.Flagged {
		fmt.Printf("false hit: %q (%s)\n", p.Query, p.Category)
	}
	fmt.Printf("%d pairs: %d positives, %d negatives\n", res.Positives+res.Negatives, res.Positives, res.Negatives)
	fmt.Printf("recall %.3f (%d/%d)  false-positive rate %.3f (%d/%d)\n",
		res.Recall(), res.Found, res.Positives, res.FalsePositiveRate(), res.FalseHits, res.Negatives)
	return nil
}

// runEveryday screens the everyday names and prints the share that hit, per
// country or set and in total, with every false hit.
func runEveryday(l *screening.List, path string, threshold float64) error {
	ps, err := readPairs(path)
	if err != nil {
		return err
	}
	res := screening.Evaluate(l, ps, screening.Options{Threshold: threshold})
	cats := make([]string, 0, len(res.ByCategory))
	for c := range res.ByCategory {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	fmt.Printf("everyday names (%s):\n", path)
	for _, c := range cats {
		n := res.ByCategory[c]
		fmt.Printf("  %-20s %3d/%-3d clear\n", c, n[1], n[0])
	}
	for _, p := range res.Flagged {
		r := l.Screen(p.Query, screening.Options{Threshold: threshold})
		fmt.Printf("false hit: %q (%s) -> %q %.4f\n", p.Query, p.Category, r.Matches[0].MatchedName, r.Matches[0].Score)
	}
	fmt.Printf("everyday false-positive rate %.4f (%d/%d)\n", res.FalsePositiveRate(), res.FalseHits, res.Negatives)
	return nil
}
