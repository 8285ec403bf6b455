package screening

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// EvalPair is one labelled row of an evaluation set: a name as a payee might
// write it and, for a positive, the list entry it must hit.
type EvalPair struct {
	Query    string // the screened name
	Entry    int    // ent_num the query must hit; 0 for a negative
	Category string // script or obfuscation, e.g. "arabic", "soft hyphen", "near-miss latin"
	Note     string
}

// Positive reports whether the pair expects a hit.
func (p EvalPair) Positive() bool { return p.Entry != 0 }

// ReadEvalPairs reads an evaluation set: CSV with a header and the columns
// query, entry, category, note. The query may hold \uXXXX escapes (so that
// invisible characters are visible in the file); entry is an ent_num or 0.
func ReadEvalPairs(r io.Reader) ([]EvalPair, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("screening: evaluation set is empty")
	}
	out := make([]EvalPair, 0, len(rows)-1)
	for i, row := range rows[1:] {
		if len(row) != 4 {
			return nil, fmt.Errorf("screening: evaluation set line %d: want 4 columns, got %d", i+2, len(row))
		}
		q, err := strconv.Unquote(`"` + row[0] + `"`)
		if err != nil {
			return nil, fmt.Errorf("screening: evaluation set line %d: query: %v", i+2, err)
		}
		id, err := strconv.Atoi(row[1])
		if err != nil {
			return nil, fmt.Errorf("screening: evaluation set line %d: entry: %v", i+2, err)
		}
		out = append(out, EvalPair{Query: q, Entry: id, Category: row[2], Note: row[3]})
	}
	return out, nil
}

// EvalResult is the outcome of screening an evaluation set.
type EvalResult struct {
	Positives, Negatives int
	Found                int        // positives whose entry was among the matches
	FalseHits            int        // negatives that hit any entry
	Missed, Flagged      []EvalPair // the positives not found, the negatives that hit
	// ByCategory counts, per category, pairs and correct outcomes.
	ByCategory map[string][2]int
}

// Recall is the share of positives found.
func (r EvalResult) Recall() float64 { return float64(r.Found) / float64(max(1, r.Positives)) }

// FalsePositiveRate is the share of negatives that hit.
func (r EvalResult) FalsePositiveRate() float64 {
	return float64(r.FalseHits) / float64(max(1, r.Negatives))
}

// Evaluate screens every pair against l. A positive counts as found when
// its entry is among the matches at or above the threshold; a negative is a
// false hit when anything matches.
func Evaluate(l *List, pairs []EvalPair, opts Options) EvalResult {
	res := EvalResult{ByCategory: map[string][2]int{}}
	for _, p := range pairs {
		r := l.Screen(p.Query, opts)
		ok := false
		if p.Positive() {
			res.Positives++
			for _, m := range r.Matches {
				if m.EntryID == p.Entry {
					ok = true
				}
			}
			if ok {
				res.Found++
			} else {
				res.Missed = append(res.Missed, p)
			}
		} else {
			res.Negatives++
			ok = r.Status != StatusHit
			if !ok {
				res.FalseHits++
				res.Flagged = append(res.Flagged, p)
			}
		}
		c := res.ByCategory[p.Category]
		c[0]++
		if ok {
			c[1]++
		}
		res.ByCategory[p.Category] = c
	}
	return res
}
