package screening

import (
	_ "embed"
	"math"
	"strings"
)

// commonNamesText is the table of common given names and surnames (see the
// file's header for its source).
//
//go:embed commonnames.txt
var commonNamesText string

// commonNames holds the normalised words of commonnames.txt.
var commonNames = func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(commonNamesText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		_, name, _ := strings.Cut(line, " ")
		for _, w := range strings.Fields(Normalize(name)) {
			m[w] = true
		}
	}
	return m
}()

// listCommonEntries is the number of entries a word must be part of to be as
// common as an everyday name: MOHAMED, ALI and HASAN are, on the SDN list.
const listCommonEntries = 40

// termCommonness is how common a listed word is, from 0 (rare: a surname
// of one or two entries) to 1 (an everyday given name or surname of
// commonnames.txt, or a word of listCommonEntries entries or more): the
// logarithm of its number of entries, from three entries up.
func termCommonness(word string, entries int) float32 {
	if commonNames[word] {
		return 1
	}
	if entries < 3 {
		return 0
	}
	return float32(min(1, math.Log(float64(entries)/2)/math.Log(listCommonEntries/2)))
}

// commonPairSim discounts the similarity of a pair with a listed word of
// commonness c: a near miss on a common word ("JAKSIC" for "JACKSON",
// "LUIS" for "LISA") says little, since many people have a name a letter or
// two from it; an exact match on one says a little less than on a rare
// word.
func commonPairSim(sim float64, c float32, sc scoring) float64 {
	if c <= 0 {
		return sim
	}
	sim = 1 - (1-sim)*(1+sc.fuzzyCommon*float64(c))
	return max(0, sim*(1-sc.exactCommon*float64(c)))
}
