package screening

import (
	"strings"
)

// maxQueryWords bounds the words of a screened name that are compared; the
// rest are ignored. Names on the list have at most about twenty words.
const maxQueryWords = 64

// query is a screened name, normalised. Its words are compared one by one
// and also joined with their neighbours (units), so that a name divided into
// words differently from the list ("Abdi Rahman" for "ABDIRAHMAN", "11420
// 21" for "11 420 2 1") still pairs.
type query struct {
	words   [][]rune
	weights []float64
	total   float64
	units   []unit
}

// unit is one word of the screened name, or two or more neighbouring words
// joined.
type unit struct {
	key    string     // the word or the joined words
	mask   uint64     // bit i set when query word i is part of the unit
	weight float64    // sum of the weights of its words
	runes  int        // length of key in runes
	common float32    // 1 for a single word of the everyday names table (commonnames.txt)
	forms  []wordForm // spellings compared: the word, without a leading article, given-name variants
}

// maxSpan is how many neighbouring words a unit joins; a whole name of up to
// maxWholeSpan words is also joined into one unit.
const (
	maxSpan      = 3
	maxWholeSpan = 8
)

// articlePrefixes are articles and filiation words sometimes written joined
// to a name ("Alzahrani", "Binladen"); a screened word starting with one is
// also compared without it.
var articlePrefixes = []string{"AL", "EL", "UL", "BIN", "BEN", "IBN"}

// minStrippedRunes is the shortest remainder worth comparing once a prefix is
// removed.
const minStrippedRunes = 4

// newQuery normalises name. A name written "LAST, First" is read as "First
// LAST", like the list's individuals. With joinHyphens a hyphen inside a word
// joins its halves.
func newQuery(name string, joinHyphens bool) query {
	var q query
	for _, nw := range nameWords(name, true, joinHyphens) {
		r := []rune(nw.text)
		if len(q.words) == maxQueryWords {
			break
		}
		q.words = append(q.words, r)
		wt := termWeight(r)
		q.weights = append(q.weights, wt)
		q.total += wt
	}
	n := len(q.words)
	for i := range n {
		u := unit{key: string(q.words[i]), mask: 1 << uint(i), weight: q.weights[i],
			runes: len(q.words[i]), forms: wordForms(string(q.words[i]))}
		if commonNames[u.key] {
			u.common = 1
		}
		q.units = append(q.units, u)
	}
	addSpan := func(i, j int) {
		var b strings.Builder
		u := unit{}
		for k := i; k < j; k++ {
			b.WriteString(string(q.words[k]))
			u.mask |= 1 << uint(k)
			u.weight += q.weights[k]
		}
		u.key = canonicalWord(b.String())
		f := newWordForm(u.key, 1)
		f.exactOnly = true
		u.forms = []wordForm{f}
		u.runes = len(u.forms[0].word)
		q.units = append(q.units, u)
	}
	for size := 2; size <= maxSpan; size++ {
		for i := 0; i+size <= n; i++ {
			addSpan(i, i+size)
		}
	}
	if n > maxSpan && n <= maxWholeSpan {
		addSpan(0, n)
	}
	return q
}

// wordForm is one spelling of a screened word, with its vowels folded, and
// the factor its similarities are scaled by (below 1 for a spelling that is
// a guess, such as a given-name variant).
type wordForm struct {
	word, folded []rune
	frame        []rune // see vowelFrame
	factor       float32
	skeleton     bool // the word has no vowels (read from Arabic or Hebrew script): also compared by consonants
	// exactOnly limits the comparison to equal words and skeletons: joined
	// words pair only when nearly equal anyway, and a fuzzy search of every
	// run of neighbouring words would triple the cost of screening.
	exactOnly bool
}

func newWordForm(w string, factor float32) wordForm {
	r := []rune(w)
	return wordForm{word: r, folded: vowelFolded(r), frame: vowelFrame(r), factor: factor, skeleton: len(r) >= 2 && !hasVowel(r)}
}

// givenNameFactor scales the similarity of a given-name variant.
const givenNameFactor = 0.95

// wordForms returns w, w without each article prefix it starts with, and the
// other spellings of the given name it is (see givenNames).
func wordForms(w string) []wordForm {
	forms := []wordForm{newWordForm(w, 1)}
	for _, p := range articlePrefixes {
		if rest, ok := strings.CutPrefix(w, p); ok && len([]rune(rest)) >= minStrippedRunes {
			forms = append(forms, newWordForm(rest, 1))
		}
	}
	for _, v := range givenNameVariants(w) {
		forms = append(forms, newWordForm(v, givenNameFactor))
	}
	return forms
}

func hasVowel(w []rune) bool {
	for _, r := range w {
		switch r {
		case 'A', 'E', 'I', 'O', 'U':
			return true
		}
		if r >= 0x80 {
			return true // not Latin: not a consonant skeleton
		}
	}
	return false
}

// initials returns the number of one-letter words of the name (see
// List.scoreName).
func (q query) initials() int {
	n := 0
	for _, w := range q.words {
		if len(w) == 1 {
			n++
		}
	}
	return n
}
