package screening

import (
	"slices"
	"strings"
	"unicode"
)

// maxSpelledRunes bounds the length of a spelled-out run that is divided into
// the list's words; longer runs are compared joined only.
const maxSpelledRunes = 64

// spelledReading returns name read with every run of single letters (see
// joinSpelled) joined whole and then divided into words the list knows:
// "U S A M A B I N L A D I N" reads "USAMA BIN LADIN", and "M A D U R O N I C
// O L A S" reads "MADURO NICOLAS", which nothing in the letters themselves
// divides. ok is false when name has no such run, or no run divides.
func (l *List) spelledReading(name string) (string, bool) {
	if !mayBeSpelled(name) {
		return "", false
	}
	words, spelled := foldSpelled(name, false, false)
	found := false
	for _, s := range spelled {
		found = found || s
	}
	if !found {
		return "", false
	}
	divided := false
	out := make([]string, 0, len(words))
	for i, w := range words {
		if spelled[i] {
			if parts, ok := l.divideSpelled(w); ok {
				out = append(out, parts...)
				divided = true
				continue
			}
		}
		out = append(out, w)
	}
	if !divided {
		return "", false
	}
	return strings.Join(out, " "), true
}

// minKnownPart is the length of the longest listed word a division must
// contain to be believed: dividing into short words only ("AL", "LI",
// "AN") can spell almost anything.
const minKnownPart = 4

// divideSpelled divides w into the fewest parts that are words of the list
// (after spelling folding) or words screening drops or joins ("BIN", "ABU"),
// allowing at most one part of three or more letters that is none of them
// (a misspelled or unlisted given name). It reports false when no division
// has a listed part of minKnownPart runes or more.
func (l *List) divideSpelled(w string) ([]string, bool) {
	r := []rune(w)
	n := len(r)
	if n < 2*minKnownPart-1 || n > maxSpelledRunes {
		return nil, false
	}
	known := func(s string) (ok, long bool) {
		if droppedWords[s] || prefixWords[s] {
			return true, false
		}
		if _, ok := l.idx.vocab[canonicalWord(s)]; ok {
			return true, len(s) >= minKnownPart
		}
		return false, false
	}
	// best[i][u][g]: the cheapest division of r[:i] with u unknown parts (0
	// or 1) and, when g is 1, a listed part of minKnownPart runes or more.
	// A part costs 1, an unknown one unknownCost.
	const unknownCost = 8
	const inf = 1 << 30
	type state struct{ cost, from, fromU, fromG int }
	best := make([][2][2]state, n+1)
	for i := range best {
		for u := range 2 {
			for g := range 2 {
				best[i][u][g].cost = inf
			}
		}
	}
	best[0][0][0].cost = 0
	for i := 0; i < n; i++ {
		for u := range 2 {
			for g := range 2 {
				cur := best[i][u][g]
				if cur.cost == inf {
					continue
				}
				for j := i + 2; j <= n; j++ {
					ok, long := known(string(r[i:j]))
					nu, ng, c := u, g, cur.cost+1
					if long {
						ng = 1
					}
					if !ok {
						if u == 1 || j-i < 3 {
							continue
						}
						nu, c = 1, cur.cost+unknownCost
					}
					if c < best[j][nu][ng].cost {
						best[j][nu][ng] = state{cost: c, from: i, fromU: u, fromG: g}
					}
				}
			}
		}
	}
	u, g := 0, 1 // a division into known words only, when there is one
	if best[n][0][1].cost == inf {
		u = 1
	}
	if best[n][u][g].cost == inf {
		return nil, false
	}
	var parts []string
	for i := n; i > 0; {
		s := best[i][u][g]
		parts = append(parts, string(r[s.from:i]))
		i, u, g = s.from, s.fromU, s.fromG
	}
	for a, b := 0, len(parts)-1; a < b; a, b = a+1, b-1 {
		parts[a], parts[b] = parts[b], parts[a]
	}
	return parts, true
}

// mayBeSpelled is a quick test, before the name is folded again, that it
// has two one-letter pieces or a dot: most names have neither.
func mayBeSpelled(name string) bool {
	singles, run := 0, 0
	for _, r := range name {
		if r == '.' {
			return true
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) {
			run++
			continue
		}
		if run == 1 {
			singles++
		}
		run = 0
	}
	if run == 1 {
		singles++
	}
	return singles >= 2
}

// hasSpelledLetters reports whether name has letters spelled out one by one
// (see joinSpelled).
func hasSpelledLetters(name string) bool {
	if !mayBeSpelled(name) {
		return false
	}
	_, spelled := foldSpelled(name, false, true)
	return slices.Contains(spelled, true)
}
