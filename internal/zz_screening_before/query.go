package screening

import "strings"

// maxQueryWords bounds the words of a screened name that are compared; the
// rest are ignored. Names on the list have at most about twenty words.
const maxQueryWords = 64

// query is a screened name, normalised.
type query struct {
	words   [][]rune
	forms   [][]wordForm // per word: the word and its spellings without a leading article
	weights []float64
	total   float64
}

// articlePrefixes are articles and filiation words sometimes written joined
// to a name ("Alzahrani", "Binladen"); a screened word starting with one is
// also compared without it.
var articlePrefixes = []string{"AL", "EL", "UL", "BIN", "BEN", "IBN"}

// minStrippedRunes is the shortest remainder worth comparing once a prefix is
// removed.
const minStrippedRunes = 4

// newQuery normalises name. A name written "LAST, First" is read as "First
// LAST", like the list's individuals.
func newQuery(name string) query {
	var q query
	for _, nw := range nameWords(name, true) {
		r := []rune(nw.text)
		if len(q.words) == maxQueryWords {
			break
		}
		q.words = append(q.words, r)
		q.forms = append(q.forms, wordForms(nw.text))
		wt := termWeight(r)
		q.weights = append(q.weights, wt)
		q.total += wt
	}
	return q
}

// wordForm is one spelling of a screened word, with its vowels folded.
type wordForm struct {
	word, folded []rune
}

func newWordForm(w string) wordForm {
	r := []rune(w)
	return wordForm{word: r, folded: vowelFolded(r)}
}

// wordForms returns w and w without each article prefix it starts with.
func wordForms(w string) []wordForm {
	forms := []wordForm{newWordForm(w)}
	for _, p := range articlePrefixes {
		if rest, ok := strings.CutPrefix(w, p); ok && len([]rune(rest)) >= minStrippedRunes {
			forms = append(forms, newWordForm(rest))
		}
	}
	return forms
}
