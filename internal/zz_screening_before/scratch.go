package screening

import "math"

// scratch is the work space of one screening, pooled per list so that
// screening does not allocate per listed name. Arrays indexed by term, name
// or entry are reset lazily: a slot is valid only when its generation stamp
// equals the current generation.
type scratch struct {
	gen uint32 // generation of the current screening

	nameGen  []uint32 // per listed name
	nameMask []uint64 // per listed name: bit i set when query word i is close to one of its terms
	touched  []int32  // listed names with a valid nameMask

	termGen  []uint32  // per term
	termSlot []int32   // per term: row of the term in sims
	sims     []float32 // row per close term, column per query word: Jaro-Winkler, 0 if below the floor

	gramGen   []uint32 // per term, generation of the bigram count
	gramCount []uint16 // per term: bigrams shared with the current query word
	gramSeen  []int32  // terms with a valid gramCount
	gramWord  uint32   // generation of the bigram count, one per query word
	qgrams    []bigram

	near []closeTerm // terms close to the current query word

	entryGen   []uint32 // per entry
	entryBest  []int32  // per entry: index of its best match in found
	found      []Match
	foundAlias []int32 // per found match: alias index of its name, -1 for the primary name
	pairs      []wordPair
	used       []bool
}

// wordPair is a query word and a listed name's term that are close.
type wordPair struct {
	query, term int
	sim         float64
}

func newScratch(names, terms, entries int) *scratch {
	return &scratch{
		nameGen:   make([]uint32, names),
		nameMask:  make([]uint64, names),
		termGen:   make([]uint32, terms),
		termSlot:  make([]int32, terms),
		gramGen:   make([]uint32, terms),
		gramCount: make([]uint16, terms),
		entryGen:  make([]uint32, entries),
		entryBest: make([]int32, entries),
	}
}

// begin starts a new screening.
func (s *scratch) begin() {
	if s.gen == math.MaxUint32 {
		clear(s.nameGen)
		clear(s.termGen)
		clear(s.entryGen)
		s.gen = 0
	}
	s.gen++
	s.touched = s.touched[:0]
	s.sims = s.sims[:0]
	s.found = s.found[:0]
	s.foundAlias = s.foundAlias[:0]
}

// beginWord starts counting bigrams for a new query word.
func (s *scratch) beginWord() {
	if s.gramWord == math.MaxUint32 {
		clear(s.gramGen)
		s.gramWord = 0
	}
	s.gramWord++
	s.gramSeen = s.gramSeen[:0]
}
