package screening

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// scoring holds the constants of the name score. A screened name and a listed
// name are compared as sets of words: each query word is paired with at most
// one listed word (best pairs first), a pair counting only when the words'
// Jaro-Winkler similarity reaches wordFloor. The score mixes how much of the
// screened name is explained (queryCoverage) with how much of the listed
// name is found (nameCoverage), each weighted by word length.
type scoring struct {
	wordFloor   float64 // Jaro-Winkler below which two words do not pair
	offsetFloor float64 // the floor for words with different first letters
	vowelFactor float64 // discount of the similarity of vowel-folded spellings
	frameFactor float64 // discount of the similarity of vowel frames (see vowelFrame)
	wordPenalty float64 // a pair of words at similarity jw counts 1 - wordPenalty*(1-jw)
	queryShare  float64 // weight of queryCoverage; nameCoverage has the rest
	minShared   float64 // share of a word's bigrams a term must have to be compared
	contained   float64 // nameCoverage at which a listed name inside the screened name is a hit
	fuzzyCommon float64 // how much more a near miss on a common listed word costs (see commonPairSim)
	exactCommon float64 // the share of a pair's similarity a fully common word loses
}

var defaultScoring = scoring{wordFloor: 0.85, offsetFloor: 0.90, vowelFactor: 0.95, frameFactor: 0.9, wordPenalty: 1, queryShare: 0.6, minShared: 0.55, contained: 0.95, fuzzyCommon: 2, exactCommon: 0.05}

// Screen scores name against every primary name and alias of the list and
// returns the entries scoring at or above the threshold, best first. An empty
// name, or one with no letters or digits, is StatusNotScreened. A name whose
// hyphenated words split into a dropped word (see hyphenHidesWord) is
// screened both split and joined, and the better score of each entry kept.
func (l *List) Screen(name string, opts Options) Result {
	if l == nil {
		return notScreened()
	}
	found, ok := l.screen(name, opts.threshold(), defaultScoring)
	switch {
	case !ok:
		return notScreened()
	case len(found) == 0:
		return Result{Status: StatusClear, Matches: []Match{}}
	}
	return Result{Status: StatusHit, Matches: found}
}

// screen returns the entries scoring at least floor; ok is false when name
// has nothing to screen.
func (l *List) screen(name string, floor float64, sc scoring) (found []Match, ok bool) {
	name = boundedName(name)
	q := newQuery(name, false)
	if len(q.words) == 0 {
		return nil, false
	}
	found = l.search(q, floor, sc)
	if hyphenHidesWord(name) {
		found = mergeMatches(found, l.search(newQuery(name, true), floor, sc))
	}
	if alt, ok := l.spelledReading(name); ok {
		if sq := newQuery(alt, false); len(sq.words) > 0 {
			found = mergeMatches(found, withExplanation(l.search(sq, floor, sc), ExplainSpelledOut))
		}
	}
	if hasSpelledLetters(name) {
		found = withExplanation(found, ExplainSpelledOut)
	}
	for _, alt := range scriptReadings(name) {
		if sq := newQuery(alt, false); len(sq.words) > 0 {
			found = mergeMatches(found, l.search(sq, floor, sc))
		}
	}
	if alt, ok := liquidReading(name); ok {
		if aq := newQuery(alt, false); len(aq.words) > 0 {
			found = mergeMatches(found, l.search(aq, floor, sc))
		}
	}
	return found, true
}

// boundedName returns the first MaxNameBytes of name, cut at a rune
// boundary. No listed name is longer, payd's callers accept 140 characters,
// and only the first maxQueryWords words are compared anyway; the bound makes
// the work of one screening independent of what a caller let through (some
// steps, such as finding the letters around a run of hyphens, cost more
// than linear time in the name's length).
func boundedName(name string) string {
	if len(name) <= MaxNameBytes {
		return name
	}
	cut := MaxNameBytes
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}

// mergeMatches keeps the better match of each entry of a and b, best first,
// at most MaxMatches.
func mergeMatches(a, b []Match) []Match {
	for _, m := range b {
		i := slices.IndexFunc(a, func(x Match) bool { return x.EntryID == m.EntryID })
		switch {
		case i < 0:
			a = append(a, m)
		case m.Score > a[i].Score:
			a[i] = m
		}
	}
	sortMatches(a)
	return a[:min(MaxMatches, len(a))]
}

func sortMatches(ms []Match) {
	slices.SortFunc(ms, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.EntryID, b.EntryID)
	})
}

// search returns the best entries scoring at least floor, at most MaxMatches.
func (l *List) search(q query, floor float64, sc scoring) []Match {
	s, _ := l.scratch.Get().(*scratch)
	if s == nil {
		s = newScratch(len(l.idx.names), len(l.idx.terms), len(l.entries))
	}
	defer l.scratch.Put(s)
	s.begin()
	for u := range q.units {
		l.closeTerms(s, q, u, sc)
	}
	initials := q.initials()
	for _, n := range s.touched {
		name := &l.idx.names[n]
		need := min(2, len(name.terms))
		if have := bits.OnesCount64(s.nameMask[n]); have+min(initials, need-1) < need {
			// A listed name of two words or more needs two in common (an
			// initial may be one), or the screened name is one of its
			// surnames alone.
			if have == 1 && len(q.words) == 1 && name.surnames != 0 {
				if score := l.surnameOnly(s, q, name); score >= floor {
					l.keepBest(s, name, score, explainSurnameOnly)
				}
			}
			continue
		}
		score, why := l.scoreName(s, q, name, need, sc)
		if score < floor {
			continue
		}
		l.keepBest(s, name, score, why)
	}
	if len(s.found) == 0 {
		return nil
	}
	sortMatches(s.found)
	out := slices.Clone(s.found[:min(MaxMatches, len(s.found))])
	for i := range out {
		out[i].Programs = slices.Clone(out[i].Programs)
		// Word similarities are kept as float32; four decimals is all the
		// score means, and it reads better in a payout's screening record.
		out[i].Score = math.Round(out[i].Score*1e4) / 1e4
	}
	return out
}

// closeTerms finds the terms equal or close to query unit u, records their
// similarity and marks the listed names containing them.
func (l *List) closeTerms(s *scratch, q query, u int, sc scoring) {
	cacheable := sc == defaultScoring // tuning runs other scorings
	key := q.units[u].key
	near, ok := l.words.get(key)
	if !ok || !cacheable {
		s.near = s.near[:0]
		for _, form := range q.units[u].forms {
			l.closeTermsOf(s, form, sc)
		}
		near = s.near
		if cacheable {
			l.words.put(key, near)
		}
	}
	for _, c := range near {
		l.recordTerm(s, q, u, c.term, float64(c.sim))
	}
}

// skeletonFactor scales the similarity of a word that matched a term only
// by its consonants.
const skeletonFactor = 0.9

// closeTermsOf appends to s.near the terms equal or close to one spelling
// of a screened word.
func (l *List) closeTermsOf(s *scratch, form wordForm, sc scoring) {
	word := form.word
	exact := int32(-1)
	if t, ok := l.idx.vocab[string(word)]; ok {
		exact = t
		s.near = append(s.near, closeTerm{term: t, sim: form.factor})
	}
	if form.skeleton {
		for i, k := range skeletonKeys(word) {
			for _, t := range l.idx.skeletons[k] {
				// The loose key (second) drops W and Y: they must then
				// stand where the listed word has long vowels.
				if t != exact && (i == 0 || longVowelsAgree(word, l.idx.terms[t].word)) {
					s.near = append(s.near, closeTerm{term: t, sim: form.factor * skeletonFactor})
				}
			}
		}
	}
	if len(form.frame) >= minFrame && !form.exactOnly {
		// The same consonants in the same places, vowels aside.
		for _, t := range l.idx.frames[string(form.frame)] {
			if t != exact {
				s.near = append(s.near, closeTerm{term: t, sim: form.factor * float32(sc.frameFactor)})
			}
		}
	}
	if len(word) < 3 || form.exactOnly {
		return // too short for a fuzzy comparison to mean anything, or joined words
	}
	s.beginWord()
	s.qgrams = wordBigrams(s.qgrams[:0], form.folded)
	need := max(2, int(sc.minShared*float64(len(s.qgrams))+0.999))
	if need > len(s.qgrams) {
		return
	}
	// A term sharing need of the word's g bigrams has at least one among any
	// g-need+1 of them, so only the postings of the g-need+1 rarest bigrams
	// are read to find candidates; the commoner bigrams are then counted from
	// each candidate's gramBits. gramBits may overcount, which only costs a
	// Jaro-Winkler comparison more.
	slices.SortFunc(s.qgrams, func(a, b bigram) int { return len(l.idx.grams[a]) - len(l.idx.grams[b]) })
	rare, common := s.qgrams[:len(s.qgrams)-need+1], s.qgrams[len(s.qgrams)-need+1:]
	lo, hi := l.idx.termsOfLengths(len(word)-shorterSlack(len(word)), len(word)+longerSlack(len(word)))
	for _, g := range rare {
		ts := l.idx.grams[g]
		from, _ := slices.BinarySearch(ts, lo)
		for _, t := range ts[from:] {
			if t >= hi {
				break
			}
			if s.gramGen[t] != s.gramWord {
				s.gramGen[t] = s.gramWord
				s.gramCount[t] = 0
				s.gramSeen = append(s.gramSeen, t)
			}
			s.gramCount[t]++
		}
	}
	// The common bigrams' bits, as one mask when no two share a bit (then a
	// population count is their number present), else one by one.
	var commonBits [16]uint64
	var commonMask uint64
	distinct := true
	for k, g := range common[:min(len(common), len(commonBits))] {
		commonBits[k] = gramBit(g)
		distinct = distinct && commonMask&commonBits[k] == 0
		commonMask |= commonBits[k]
	}
	for _, t := range s.gramSeen {
		if t == exact {
			continue
		}
		count := int(s.gramCount[t])
		if gb := l.idx.gramBits[t]; distinct {
			count += bits.OnesCount64(gb & commonMask)
		} else {
			for _, b := range commonBits[:min(len(common), len(commonBits))] {
				if gb&b != 0 {
					count++
				}
			}
		}
		if count < need {
			continue
		}
		// Folding only merges letters, so the folded spellings are at least
		// as similar as the plain ones; a pair whose folded spellings fall
		// short of the floor is not compared further.
		folded := wordSimilarity(form.folded, l.idx.foldedOf(t))
		if folded < sc.wordFloor {
			continue
		}
		tm := &l.idx.terms[t]
		floor := sc.wordFloor
		if !soundAlike(word[0], tm.word[0]) {
			// Without a common first letter Jaro-Winkler gives no prefix
			// bonus, yet a short word inside a longer one ("ALI" in
			// "SALIM") still scores high: such pairs must be closer.
			// First letters that transliteration swaps for one sound
			// ("Tahir"/"Dahir", "Viktor"/"Wiktor", "Kaddafi"/"Gaddafi")
			// count as common.
			floor = sc.offsetFloor
		}
		if jw := max(wordSimilarity(word, tm.word), sc.vowelFactor*folded); jw >= floor {
			s.near = append(s.near, closeTerm{term: t, sim: form.factor * float32(1-sc.wordPenalty*(1-jw))})
		}
	}
}

// A fuzzy pair needs words of about the same length: a word more than a
// third longer than the other, by three runes or more, is another name built
// on it ("ASAD", "ASADULA"). longerSlack and shorterSlack are how many runes
// longer or shorter than a screened word of n runes a listed word may be to
// be compared at all: two, or up to a third of the shorter word.
func longerSlack(n int) int  { return max(2, n/3) }
func shorterSlack(n int) int { return max(2, n/4) }

// recordTerm notes that query unit u is sim close to term t.
func (l *List) recordTerm(s *scratch, q query, u int, t int32, sim float64) {
	nu := len(q.units)
	if s.termGen[t] != s.gen {
		s.termGen[t] = s.gen
		s.termSlot[t] = int32(len(s.sims) / nu)
		for range nu {
			s.sims = append(s.sims, 0)
		}
	}
	if cell := &s.sims[int(s.termSlot[t])*nu+u]; float32(sim) > *cell {
		*cell = float32(sim)
	}
	mask := q.units[u].mask
	for _, n := range l.idx.terms[t].postings {
		if s.nameGen[n] != s.gen {
			s.nameGen[n] = s.gen
			s.nameMask[n] = 0
			s.touched = append(s.touched, n)
		}
		s.nameMask[n] |= mask
	}
}

// scoreName pairs the query units with the listed name's terms, best pairs
// first (a unit pairs only when none of its words is paired yet), and
// combines the two coverages. It returns 0 when fewer than need terms pair.
func (l *List) scoreName(s *scratch, q query, name *listedName, need int, sc scoring) (float64, explain) {
	nu := len(q.units)
	s.pairs = s.pairs[:0]
	for j, t := range name.terms {
		if s.termGen[t] != s.gen {
			continue
		}
		row := s.sims[int(s.termSlot[t])*nu : int(s.termSlot[t]+1)*nu]
		for u, sim := range row {
			if sim > 0 {
				s.pairs = append(s.pairs, wordPair{query: u, term: j, sim: float64(sim)})
			}
		}
	}
	// Without an anchor (a pair at anchorSim or closer on a word common
	// neither on the list nor among everyday names), a match rests on
	// common words and near misses: each pair is discounted by how common
	// its words are (commonPairSim).
	anchored := false
	for _, p := range s.pairs {
		if p.sim >= anchorSim-1e-6 && l.idx.common[name.terms[p.term]] < anchorCommon && q.units[p.query].common < anchorCommon {
			anchored = true
			break
		}
	}
	if !anchored {
		k := 0
		for _, p := range s.pairs {
			c := max(l.idx.common[name.terms[p.term]], q.units[p.query].common)
			if p.sim = commonPairSim(p.sim, c, sc); p.sim > 0 {
				s.pairs[k] = p
				k++
			}
		}
		s.pairs = s.pairs[:k]
	}
	slices.SortFunc(s.pairs, func(a, b wordPair) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.query, b.query) // single words before joined ones
	})
	if cap(s.used) < len(name.terms) {
		s.used = make([]bool, len(name.terms))
	}
	used := s.used[:len(name.terms)]
	clear(used)
	var usedWords uint64
	var queryCovered, nameCovered float64
	minSim := 1.0 // the lowest similarity of the pairs taken
	paired := 0
	for _, p := range s.pairs {
		un := &q.units[p.query]
		if usedWords&un.mask != 0 || used[p.term] {
			continue
		}
		if (name.joined || un.mask&(un.mask-1) != 0) && !un.forms[0].skeleton && (p.sim < joinedFloor-1e-6 || abs(un.runes-len(l.idx.terms[name.terms[p.term]].word)) > 1) {
			continue // joined words pair only when nearly equal
		}
		usedWords |= un.mask
		used[p.term] = true
		paired++
		minSim = min(minSim, p.sim)
		queryCovered += p.sim * un.weight
		nameCovered += p.sim * name.weights[p.term]
	}
	var why explain
	if paired >= 1 && (anchored || paired >= 2 && minSim >= 1-sc.exactCommon-1e-6) && !name.joined {
		// A one-letter word of the screened name left unpaired is an
		// initial: it pairs with the first unpaired listed word of that
		// letter ("N. MADURO MOROS", "J. L. RIZO MORENO"), when the rest
		// of the match has an anchor or two words as listed ("N. MORENO
		// GONZALEZ"; "M. HERNANDEZ" has neither).
		for i, w := range q.words {
			if len(w) != 1 || usedWords&(1<<uint(i)) != 0 {
				continue
			}
			for j, t := range name.terms {
				if tw := l.idx.terms[t].word; !used[j] && len(tw) >= 2 && tw[0] == w[0] {
					used[j] = true
					usedWords |= 1 << uint(i)
					paired++
					queryCovered += q.weights[i]
					nameCovered += initialFactor * name.weights[j]
					why |= explainInitials
					break
				}
			}
		}
	}
	if paired < need {
		return 0, 0
	}
	queryCoverage := queryCovered / q.total
	nameCoverage := nameCovered / name.weight
	score := sc.queryShare*queryCoverage + (1-sc.queryShare)*nameCoverage
	if nameCoverage >= sc.contained && nameCoverage > score {
		switch {
		case paired >= containedWords:
			// Every word of a listed name of three or more words is in
			// the screened name, nearly as listed: extra words around it
			// (a father's name, or padding meant to dilute the score) do
			// not make it another name.
			score = nameCoverage
			why |= explainExtraNames
		case paired == 2 && len(name.terms) == 2 && name.surnames != 0 && anchored && minSim >= extraNamesSim &&
			len(q.words) <= paired+maxExtraNames && usedWords&1 != 0 && usedWords&(1<<uint(len(q.words)-1)) != 0:
			// Both words of a listed individual's two-word name, as
			// listed, one of them not common, first and last with a few
			// names between ("Igor Ivanovich Petrovich SECHIN"): counted
			// a little below a word-for-word match.
			score = max(score, extraNamesFactor*nameCoverage)
			why |= explainExtraNames
		}
	}
	return score, why
}

// initialFactor is how much of a listed word an initial standing for it
// covers.
const initialFactor = 0.8

// extraNamesFactor scales the score of a two-word listed name found whole
// among extra names; maxExtraNames bounds how many extra names.
// extraNamesSim is the similarity both words need.
const (
	extraNamesFactor = 0.9
	maxExtraNames    = 3
	extraNamesSim    = 0.98
)

// surnameOnlyScore is the score of a screened name that is only one
// surname of a listed individual (see surnameOnly): just above the default
// threshold, so that the payout is held and a reviewer sees why.
const surnameOnlyScore = 0.85

// minSurnameOnly is the shortest surname that hits alone; a surname as
// common as maxSurnameOnlyCommon (on five entries or more of the list, or an
// everyday name) never does.
const (
	minSurnameOnly       = 6
	maxSurnameOnlyCommon = 0.3
)

// surnameOnly scores a screened name of one word against a listed
// individual's name of which it is a surname, written nearly as listed
// (0.95 or closer), of minSurnameOnly runes or more, and rare: on at most
// four entries and not an everyday name ("maduro" for "Nicolas MADURO
// MOROS"). It returns 0 otherwise.
func (l *List) surnameOnly(s *scratch, q query, name *listedName) float64 {
	nu := len(q.units)
	for j, t := range name.terms {
		if name.surnames&(1<<uint(j)) == 0 || s.termGen[t] != s.gen {
			continue
		}
		if len(l.idx.terms[t].word) < minSurnameOnly || l.idx.common[t] >= maxSurnameOnlyCommon || q.units[0].common > 0 {
			continue
		}
		if s.sims[int(s.termSlot[t])*nu] >= 0.95-1e-6 {
			return surnameOnlyScore
		}
	}
	return 0
}

// anchorSim and anchorCommon define an anchor: a pair of words this similar,
// neither of them more common than this, which makes a match rest on
// something rarer than an everyday name.
const (
	anchorSim    = 0.9
	anchorCommon = 0.5
)

// joinedFloor is the similarity that joined words (several words of the
// screened name, or a listed name's words joined into one) need to pair:
// joining makes long words, and Jaro-Winkler rates two long words that
// begin alike highly however they end. Consonant skeletons (words read
// from Arabic or Hebrew script) pair only on equal keys and are exempt.
const joinedFloor = 0.95

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// containedWords is the fewest words of a listed name found whole inside a
// longer screened name that make a hit on their own.
const containedWords = 3

// keepBest records a scoring name under its entry, keeping the entry's best;
// on equal scores the primary name wins over an alias, then the earlier
// alias, so results do not depend on the order names were visited.
func (l *List) keepBest(s *scratch, name *listedName, score float64, why explain) {
	e := name.entry
	if s.entryGen[e] == s.gen {
		k := s.entryBest[e]
		m := &s.found[k]
		if score > m.Score || (score == m.Score && name.alias < s.foundAlias[k]) {
			m.Score = score
			m.MatchedName, m.IsAlias = l.nameText(name)
			m.Explanation = why.list()
			s.foundAlias[k] = name.alias
		}
		return
	}
	s.entryGen[e] = s.gen
	s.entryBest[e] = int32(len(s.found))
	entry := &l.entries[e]
	text, isAlias := l.nameText(name)
	s.found = append(s.found, Match{
		EntryID:     entry.ID,
		List:        entry.List,
		ListName:    entry.Name,
		MatchedName: text,
		IsAlias:     isAlias,
		Type:        entry.Type,
		Programs:    entry.Programs,
		Score:       score,
		Explanation: why.list(),
	})
	s.foundAlias = append(s.foundAlias, name.alias)
}

// nameText returns the listed spelling of a name and whether it is an alias.
func (l *List) nameText(name *listedName) (string, bool) {
	entry := &l.entries[name.entry]
	if name.alias < 0 {
		return entry.Name, false
	}
	return entry.Aliases[name.alias].Name, true
}

// soundGroups are letters that different transliterations of one name put
// at its start: labials (Thai and German W for V, B for P, F for
// V); K, C, Q, G (Qaddafi, Kaddafi, Gaddafi); D and T (Arabic emphatics);
// S, Z and C; J, G and Y (Jamal, Gamal; Yusuf, Jusuf).
var soundGroups = []string{"BPVFW", "CKQG", "DT", "SZC", "JGY"}

// soundAlike reports whether two first letters are equal or in one of the
// soundGroups.
func soundAlike(a, b rune) bool {
	if a == b {
		return true
	}
	for _, g := range soundGroups {
		if strings.ContainsRune(g, a) && strings.ContainsRune(g, b) {
			return true
		}
	}
	return false
}

// withExplanation adds an explanation to every match of ms.
func withExplanation(ms []Match, e string) []Match {
	for i := range ms {
		if !slices.Contains(ms[i].Explanation, e) {
			ms[i].Explanation = append(ms[i].Explanation, e)
		}
	}
	return ms
}
