package screening

import "encoding/json"

// Screening statuses, as stored on payouts and transfers.
const (
	StatusClear       = "clear"        // screened; no listed name scored at or above the threshold
	StatusHit         = "hit"          // screened; at least one listed name scored at or above the threshold
	StatusNotScreened = "not_screened" // no name was given, or no list is configured
)

// DefaultThreshold is the score at or above which a listed name is a hit,
// chosen from the labelled set in testdata/labelled.csv (see
// docs/screening.md for its precision and recall).
const DefaultThreshold = 0.82

// MaxMatches is the most matches a Result carries, the best first.
const MaxMatches = 5

// Options tunes screening.
type Options struct {
	// Threshold is the score, between 0 and 1, at or above which a listed
	// name is a hit. Zero means DefaultThreshold.
	Threshold float64
}

// threshold returns the effective threshold.
func (o Options) threshold() float64 {
	if o.Threshold <= 0 {
		return DefaultThreshold
	}
	return o.Threshold
}

// Result is the outcome of screening one name.
type Result struct {
	Status  string  `json:"status"`  // StatusClear, StatusHit or StatusNotScreened
	Matches []Match `json:"matches"` // entries scoring at or above the threshold, best first, at most MaxMatches; empty, not nil, when there are none
}

// notScreened is the result for a name that was not screened.
func notScreened() Result { return Result{Status: StatusNotScreened, Matches: []Match{}} }

// Match is one listed entry that a screened name resembles.
type Match struct {
	EntryID     int      `json:"entry_id"`     // the list's identifier of the entry (OFAC ent_num, UN DATAID, EU logicalId)
	List        string   `json:"list"`         // the list the entry is on: ListOFAC, ListUN or ListEU
	ListName    string   `json:"list_name"`    // primary name of the entry
	MatchedName string   `json:"matched_name"` // the primary name or alias that scored best
	IsAlias     bool     `json:"is_alias"`     // whether MatchedName is an alias
	Type        string   `json:"type"`         // TypeIndividual, TypeEntity, TypeVessel or TypeAircraft
	Programs    []string `json:"programs"`     // sanctions programs of the entry
	Score       float64  `json:"score"`        // similarity from 0 to 1, rounded to four decimals
	// Explanation names how the screened name differs from the listed one
	// when the match rests on a variation that needs its own rule (the
	// Explain* values); absent for a match word for word.
	Explanation []string `json:"explanation,omitempty"`
}

// Explanations of a match (Match.Explanation).
const (
	// ExplainInitials: given names written as initials ("N. MADURO MOROS").
	ExplainInitials = "given_names_as_initials"
	// ExplainExtraNames: the screened name has names the listed one lacks
	// (further middle names, a father's name) around all of its words.
	ExplainExtraNames = "extra_names"
	// ExplainSurnameOnly: the screened name is one surname of the listed
	// individual, long and rare on the list and not an everyday name.
	ExplainSurnameOnly = "surname_only"
	// ExplainSpelledOut: the screened name has letters written one by one
	// ("D-a-v-i-d"), read as the words they spell.
	ExplainSpelledOut = "letters_spelled_out"
)

// explain is a set of explanations, one bit each.
type explain uint8

const (
	explainInitials explain = 1 << iota
	explainExtraNames
	explainSurnameOnly
	explainSpelledOut
)

// list returns the explanations of e, in a fixed order; nil when none.
func (e explain) list() []string {
	var out []string
	for i, s := range []string{ExplainInitials, ExplainExtraNames, ExplainSurnameOnly, ExplainSpelledOut} {
		if e&(1<<uint(i)) != 0 {
			out = append(out, s)
		}
	}
	return out
}

// UnmarshalJSON reads a stored match. Matches stored before payd read more
// than one list carry no list: they are OFAC's, the only list then.
func (m *Match) UnmarshalJSON(b []byte) error {
	type plain Match
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.List == "" {
		p.List = ListOFAC
	}
	*m = Match(p)
	return nil
}
