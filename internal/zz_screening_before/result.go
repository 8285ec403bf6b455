package screening

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
	EntryID     int      `json:"entry_id"`     // ent_num of the entry
	ListName    string   `json:"list_name"`    // primary name of the entry
	MatchedName string   `json:"matched_name"` // the primary name or alias that scored best
	IsAlias     bool     `json:"is_alias"`     // whether MatchedName is an alias
	Type        string   `json:"type"`         // TypeIndividual, TypeEntity, TypeVessel or TypeAircraft
	Programs    []string `json:"programs"`     // sanctions programs of the entry
	Score       float64  `json:"score"`        // similarity from 0 to 1, rounded to four decimals
}
