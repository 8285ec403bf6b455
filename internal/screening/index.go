package screening

import (
	"slices"
	"strings"
)

// index is the search structure built at load. Every primary name and alias
// is normalised into terms (distinct normalised words); each term lists the
// names that contain it, and each bigram of a term's vowel-folded spelling
// (padded with start and end marks) lists the terms that contain it.
// Screening a name finds, for each of its words, the terms that are equal or
// close (of similar length, sharing enough bigrams, then Jaro-Winkler above a
// floor), and scores only the names those terms point to.
type index struct {
	names []listedName
	terms []term
	vocab map[string]int32   // normalised word -> term id
	grams map[bigram][]int32 // bigram -> term ids, ascending
	// skeletons maps the consonants of a term (see skeletonKeys) to the
	// terms that have them, so that a word read from a script that writes
	// no short vowels (Arabic, Hebrew) finds the spellings with vowels.
	skeletons map[string][]int32
	// frames maps the vowel frame of a term (see vowelFrame), when at
	// least minFrame runes, to the terms that have it.
	frames map[string][]int32
	// gramBits has, per term, one bit per bigram of its folded spelling (see
	// gramBit): a quick, inexact membership test, kept apart from terms so
	// that scanning it stays in cache.
	gramBits []uint64
	// foldedRunes holds every term's folded spelling end to end, term t at
	// foldedRunes[foldedAt[t]:foldedAt[t+1]]: the candidates of a search are
	// compared from one contiguous block rather than from a slice each.
	foldedRunes []rune
	foldedAt    []int32
	// common is, per term, how common the word is (see termCommonness).
	common []float32
	// Terms are numbered by increasing length, so every list of term ids is
	// also ordered by length; lenStart[n] is the first term id of n or more
	// runes, which bounds a search to terms of about the query word's length.
	lenStart []int32
}

// listedName is one primary name or alias of an entry, normalised.
type listedName struct {
	entry   int32     // index of the entry in List.entries
	alias   int32     // index in Entry.Aliases, or -1 for the primary name
	terms   []int32   // term ids in name order; a repeated word is repeated
	weights []float64 // weight of each term in this name
	weight  float64   // sum of weights
	// joined marks the name's words joined into one term: it pairs only
	// with a screened unit of nearly the same length and similarity.
	joined bool
	// surnames has bit j set when term j is part of a listed individual's
	// surname (see surnameOnly).
	surnames uint64
}

// term is one distinct normalised word of the list.
type term struct {
	word     []rune
	folded   []rune  // word with vowels folded (see vowelFolded)
	frame    []rune  // word with every run of vowels one mark (see vowelFrame)
	postings []int32 // names containing the term, ascending
}

// bigram is two consecutive runes of a padded word.
type bigram uint64

// Padding runes around a word, so that the first and last letters count.
const (
	wordStart = '\x02'
	wordEnd   = '\x03'
)

// wordBigrams appends the distinct bigrams of ^word$ to dst.
func wordBigrams(dst []bigram, word []rune) []bigram {
	prev := rune(wordStart)
	for i := 0; i <= len(word); i++ {
		r := rune(wordEnd)
		if i < len(word) {
			r = word[i]
		}
		g := bigram(uint64(prev)<<32 | uint64(r))
		if !slices.Contains(dst, g) {
			dst = append(dst, g)
		}
		prev = r
	}
	return dst
}

// gramBit maps a bigram to one of 64 bits. A term's gramBits has the bits of
// all its bigrams, so a clear bit proves a bigram absent; a set bit only
// suggests it present.
func gramBit(g bigram) uint64 {
	h := uint64(g) * 0x9E3779B97F4A7C15 // Fibonacci hashing spreads the rune pairs
	return 1 << (h >> 58)
}

// termWeight is how much a word counts towards coverage: its length in
// runes, so that a long surname outweighs a short given name.
func termWeight(word []rune) float64 { return float64(len(word)) }

// middleNameWeight scales the weight of a listed individual's middle names,
// patronymics and father's names: "Igor Girkin" is how "GIRKIN, Igor
// Vsevolodovich" is usually written.
const middleNameWeight = 0.25

// maxJoinedShort is the longest a word may be, in bytes, for the listed
// word pair it is part of to be indexed joined too.
const maxJoinedShort = 3

func buildIndex(entries []Entry) index {
	idx := index{vocab: make(map[string]int32), grams: make(map[bigram][]int32), skeletons: make(map[string][]int32), frames: make(map[string][]int32)}
	termOf := func(text string) int32 {
		t, ok := idx.vocab[text]
		if !ok {
			t = int32(len(idx.terms))
			idx.vocab[text] = t
			word := []rune(text)
			idx.terms = append(idx.terms, term{word: word, folded: vowelFolded(word), frame: vowelFrame(word)})
		}
		return t
	}
	addWords := func(entry, alias int, words []nameWord, joined bool) {
		n := listedName{entry: int32(entry), alias: int32(alias), joined: joined}
		id := int32(len(idx.names))
		for j, w := range words {
			if w.surname && j < 64 {
				n.surnames |= 1 << uint(j)
			}
			t := termOf(w.text)
			weight := termWeight(idx.terms[t].word)
			if w.middle {
				weight *= middleNameWeight
			}
			// A repeated word ("OMAR, Omar Awadh") stays repeated: the
			// screened name must have it twice to cover the listed name.
			if !slices.Contains(n.terms, t) {
				idx.terms[t].postings = append(idx.terms[t].postings, id)
			}
			n.terms = append(n.terms, t)
			n.weights = append(n.weights, weight)
			n.weight += weight
		}
		idx.names = append(idx.names, n)
	}
	// Each name is indexed as written (hyphens splitting words), with its
	// hyphenated words joined when it has any, and with all its words
	// joined into one, so that a screened name divided into words
	// differently still finds it.
	add := func(entry, alias int, name string, individual bool) {
		words := nameWords(name, individual, false)
		addWords(entry, alias, words, false)
		if hasInnerHyphen(name) {
			if joined := nameWords(name, individual, true); !sameWords(joined, words) {
				addWords(entry, alias, joined, false)
			}
		}
		// Two neighbouring words of a longer name, one of them short, are
		// also indexed joined: given names of two syllables ("JONG UN",
		// written "Jongun") and names with a split-off suffix ("HAYAT ULA",
		// written "Hayatullah").
		for i := 0; len(words) >= 3 && i+1 < len(words); i++ {
			a, b := words[i], words[i+1]
			if min(len(a.text), len(b.text)) > maxJoinedShort {
				continue
			}
			joined := slices.Concat(words[:i], []nameWord{{text: canonicalWord(a.text + b.text), middle: a.middle && b.middle}}, words[i+2:])
			addWords(entry, alias, joined, false)
		}
		if len(words) >= 2 {
			var b strings.Builder
			for _, w := range words {
				b.WriteString(w.text)
			}
			addWords(entry, alias, []nameWord{{text: canonicalWord(b.String())}}, true)
		}
	}
	for i := range entries {
		e := &entries[i]
		individual := e.Type == TypeIndividual
		add(i, -1, e.Name, individual)
		for j := range e.Aliases {
			add(i, j, e.Aliases[j].Name, individual)
		}
	}
	idx.orderByLength()
	idx.common = make([]float32, len(idx.terms))
	seen := make([]int32, len(entries))
	for i := range seen {
		seen[i] = -1
	}
	for t := range idx.terms {
		n := 0
		for _, p := range idx.terms[t].postings {
			if e := idx.names[p].entry; seen[e] != int32(t) {
				seen[e] = int32(t)
				n++
			}
		}
		idx.common[t] = termCommonness(string(idx.terms[t].word), n)
	}
	var gs []bigram
	idx.gramBits = make([]uint64, len(idx.terms))
	idx.foldedAt = make([]int32, 0, len(idx.terms)+1)
	for t := range idx.terms {
		idx.foldedAt = append(idx.foldedAt, int32(len(idx.foldedRunes)))
		idx.foldedRunes = append(idx.foldedRunes, idx.terms[t].folded...)
	}
	idx.foldedAt = append(idx.foldedAt, int32(len(idx.foldedRunes)))
	for t := range idx.terms {
		for _, k := range skeletonKeys(idx.terms[t].word) {
			if ts := idx.skeletons[k]; !slices.Contains(ts, int32(t)) {
				idx.skeletons[k] = append(ts, int32(t))
			}
		}
		if f := idx.terms[t].frame; len(f) >= minFrame {
			idx.frames[string(f)] = append(idx.frames[string(f)], int32(t))
		}
		gs = wordBigrams(gs[:0], idx.terms[t].folded)
		for _, g := range gs {
			idx.grams[g] = append(idx.grams[g], int32(t))
			idx.gramBits[t] |= gramBit(g)
		}
	}
	return idx
}

// orderByLength renumbers the terms by increasing length and fills lenStart.
func (idx *index) orderByLength() {
	order := make([]int32, len(idx.terms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		return len(idx.terms[a].word) - len(idx.terms[b].word)
	})
	newID := make([]int32, len(order))
	terms := make([]term, len(order))
	for n, old := range order {
		newID[old] = int32(n)
		terms[n] = idx.terms[old]
	}
	idx.terms = terms
	for w, t := range idx.vocab {
		idx.vocab[w] = newID[t]
	}
	for i := range idx.names {
		for j, t := range idx.names[i].terms {
			idx.names[i].terms[j] = newID[t]
		}
	}
	longest := 0
	if len(terms) > 0 {
		longest = len(terms[len(terms)-1].word)
	}
	idx.lenStart = make([]int32, longest+2)
	t := 0
	for n := range idx.lenStart {
		for t < len(terms) && len(terms[t].word) < n {
			t++
		}
		idx.lenStart[n] = int32(t)
	}
}

// foldedOf returns the folded spelling of term t.
func (idx *index) foldedOf(t int32) []rune {
	return idx.foldedRunes[idx.foldedAt[t]:idx.foldedAt[t+1]:idx.foldedAt[t+1]]
}

// termsOfLengths returns the range [lo, hi) of term ids whose length is
// from shortest to longest runes.
func (idx *index) termsOfLengths(shortest, longest int) (lo, hi int32) {
	last := len(idx.lenStart) - 1
	return idx.lenStart[min(last, max(0, shortest))], idx.lenStart[min(last, max(0, longest+1))]
}

func sameWords(a, b []nameWord) bool {
	return slices.EqualFunc(a, b, func(x, y nameWord) bool { return x.text == y.text })
}

// minSkeleton is the fewest consonants a skeleton must have to be looked up.
const minSkeleton = 2

// skeletonKeys returns the consonant skeletons of a Latin word: its letters
// without A, E, I, O, U, and a final H, C read as K, Z as D (Arabic ظ is
// written Z, D or DH: "Zahir", "Dahir", "Dhahir"), doubled consonants single ("MUHAMAD"
// and the Arabic-script reading "MHMD" both give MHMD); and, when they
// differ, the same also without W and Y, which Arabic and Hebrew script use
// for long vowels ("MAHMUD", "MHMWD": MHMD). Skeletons shorter than
// minSkeleton, and words with other runes than A to Z, have none.
func skeletonKeys(word []rune) []string {
	strict, _ := skeletonOf(word, false, false)
	loose, _ := skeletonOf(word, true, false)
	var keys []string
	if len(strict) >= minSkeleton {
		keys = append(keys, string(strict))
	}
	if len(loose) >= minSkeleton && len(loose) != len(strict) {
		keys = append(keys, string(loose))
	}
	return keys
}

// skeletonOf returns the skeleton of word (see skeletonKeys), without W and
// Y when loose, and per consonant the vowels and (when loose) W and Y that
// follow it before the next consonant; slots[0] holds those before the
// first consonant, so len(slots) is len(skel)+1 (nil unless withSlots). It
// returns nil for a word with runes other than A to Z.
func skeletonOf(word []rune, loose, withSlots bool) (skel []rune, slots [][]rune) {
	skel = make([]rune, 0, len(word))
	if withSlots {
		slots = make([][]rune, 1, len(word)+1)
	}
	for i, r := range word {
		if r < 'A' || r > 'Z' {
			return nil, nil
		}
		vowel := false
		switch r {
		case 'A', 'E', 'I', 'O', 'U':
			vowel = true
		case 'W', 'Y':
			vowel = loose
		}
		if vowel {
			if withSlots {
				slots[len(slots)-1] = append(slots[len(slots)-1], r)
			}
			continue
		}
		if r == 'H' && i == len(word)-1 && i > 0 {
			continue
		}
		switch r {
		case 'C':
			r = 'K' // Latin spellings write C where Arabic and Hebrew have k or q
		case 'Z':
			r = 'D'
		}
		if n := len(skel); n > 0 && skel[n-1] == r {
			continue
		}
		skel = append(skel, r)
		if withSlots {
			slots = append(slots, nil)
		}
	}
	return skel, slots
}

// longVowelsAgree reports whether a word read from Arabic or Hebrew script
// (q, with no vowels but the long ones written W and Y) can be the Latin
// word t that has the same loose skeleton: wherever q writes a W after a
// consonant, t has U, O or W there, and wherever q writes a Y, t has I, E or
// Y. So "MHMWD" (محمود) is "MAHMUD" but not "MOHAMED", while "MHMD" (محمد),
// which writes no vowel, may be either.
func longVowelsAgree(q, t []rune) bool {
	qs, qslots := skeletonOf(q, true, true)
	ts, tslots := skeletonOf(t, true, true)
	if len(qs) != len(ts) || len(qslots) != len(tslots) {
		return false
	}
	for i, slot := range qslots {
		for _, v := range slot {
			want := "UOW"
			if v == 'Y' {
				want = "IEY"
			}
			if !slices.ContainsFunc(tslots[i], func(r rune) bool { return strings.ContainsRune(want, r) }) {
				return false
			}
		}
	}
	return true
}
