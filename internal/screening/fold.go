package screening

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// foldSpecial maps letters that compatibility decomposition leaves whole to
// their usual Latin spelling.
var foldSpecial = map[rune]string{
	'ß': "SS", 'ẞ': "SS", 'Æ': "AE", 'æ': "AE", 'Œ': "OE", 'œ': "OE",
	'Ø': "O", 'ø': "O", 'Ł': "L", 'ł': "L", 'Đ': "D", 'đ': "D", 'Ð': "D", 'ð': "D",
	'Þ': "TH", 'þ': "TH", 'ı': "I", 'Ħ': "H", 'ħ': "H", 'Ŋ': "NG", 'ŋ': "NG",
}

// isJoiner reports whether r is removed without splitting a word: apostrophes
// ("Sa'id", "O'Brien") and dots ("S.A.", "U.S.A.").
func isJoiner(r rune) bool {
	switch r {
	case '\'', '’', '‘', 'ʼ', 'ʻ', '`', '´', 'ʹ', '.':
		return true
	}
	return false
}

// foldWords puts s in Latin letters (see prepare), upper-cases it, strips
// accents and other combining marks, drops apostrophes and dots, and splits
// the rest on anything that is not a letter or a digit. A hyphen between two
// letters or digits ("Jean-Pierre", or "Us-ama" written to evade screening)
// splits the word, or with joinHyphens joins its two halves. Letters spelled
// out one by one ("D-a-v-i-d", "D a v i d", "D_a_v_i_d") are read as the
// words they spell (see joinSpelled). It works rune by rune, so text in any
// script passes through without error.
func foldWords(s string, joinHyphens bool) []string {
	words, _ := foldSpelled(s, joinHyphens, true)
	return words
}

// foldedToken is one word of a name as foldWords first splits it, with what
// joinSpelled needs to see: the separator before it and the case of its
// letters as written.
type foldedToken struct {
	text   string // folded, upper case
	sep    string // the characters between the previous token and this one
	single bool   // one letter as written
	lower  bool   // written in lower case
	dotted bool   // three or more single letters joined by dots ("U.S.A.")
}

// foldSpelled is foldWords, also reporting which words were spelled out
// letter by letter; without clues a run of single letters is one word (see
// joinSpelled).
func foldSpelled(s string, joinHyphens, clues bool) (words []string, spelled []bool) {
	var b, sep strings.Builder
	b.Grow(len(s))
	var tokens []foldedToken
	letters, lower := 0, false
	// dots counts the dots inside the token and segment the letters since
	// the last one; dotted stays true while every segment has one letter.
	dots, segment, dotted := 0, 0, true
	flush := func() {
		if b.Len() == 0 {
			return
		}
		dotted = dotted && segment <= 1 && letters >= minSpelledRun && letters == dots+min(segment, 1)
		tokens = append(tokens, foldedToken{text: b.String(), sep: sep.String(), single: letters == 1, lower: lower, dotted: dotted})
		b.Reset()
		sep.Reset()
		letters, lower = 0, false
		dots, segment, dotted = 0, 0, true
	}
	rs := []rune(norm.NFKD.String(prepare(s)))
	for i, r := range rs {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me):
			// combining accent left by the decomposition
		case isJoiner(r) && !(r == '.' && b.Len() == 0):
			// A dot joins ("S.A.") unless it stands alone between
			// separators ("N. I. C."), where it is a separator.
			if r == '.' {
				dots++
				dotted = dotted && segment == 1
				segment = 0
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			segment++
			if unicode.IsLetter(r) {
				letters++
				lower = unicode.IsLower(r)
			} else {
				letters += 2 // a digit is never a spelled-out letter
			}
			r = unicode.ToUpper(r)
			if t, ok := foldSpecial[r]; ok {
				b.WriteString(t)
			} else {
				b.WriteRune(r)
			}
		case joinHyphens && isHyphen(r) && innerHyphen(rs, i):
		default:
			flush()
			sep.WriteRune(r)
		}
	}
	flush()
	return joinSpelled(tokens, clues)
}

// minSpelledRun is the fewest single letters in a row that are read as a
// word spelled out: two are more often initials ("J K Rowling"), unless
// something other than a space or a dot separates them ("A-l", "A_l").
const minSpelledRun = 3

// joinSpelled joins runs of single letters into the words they spell, so
// that "D-a-v-i-d M-i-l-l-e-r", "D a v i d M i l l e r", "D_a_v_i_d" and
// "D*a*v*i*d" are screened as DAVID MILLER. With clues, a run is divided
// into words where its separator differs from the separators on both sides
// ("D-a-v-i-d M-i-l-l-e-r": the space; "D|a|v|i|d/M+i+l+l+e+r": the slash)
// and where a capital follows a small letter ("D a v i d M i l l e r"); a
// run with neither ("D A V I D M I L L E R"), or read without clues, stays
// one word, which List.spelledReading divides by the list's own words.
func joinSpelled(tokens []foldedToken, clues bool) (words []string, spelled []bool) {
	for i := 0; i < len(tokens); {
		j := i + 1
		for tokens[i].single && j < len(tokens) && tokens[j].single {
			j++
		}
		run := tokens[i:j]
		if len(run) == 1 && run[0].dotted {
			words = append(words, run[0].text)
			spelled = append(spelled, true)
			i = j
			continue
		}
		if len(run) < minSpelledRun && !(len(run) == 2 && !plainSeparator(run[1].sep)) {
			for _, t := range run {
				words = append(words, t.text)
				spelled = append(spelled, false)
			}
			i = j
			continue
		}
		var w strings.Builder
		for k, t := range run {
			if k > 0 && clues && w.Len() > 0 && wordGap(run, k) {
				words = append(words, w.String())
				spelled = append(spelled, true)
				w.Reset()
			}
			w.WriteString(t.text)
		}
		words = append(words, w.String())
		spelled = append(spelled, true)
		i = j
	}
	return words, spelled
}

// wordGap reports whether the gap before run[k] (k >= 1) ends a spelled
// word: its separator differs from the gaps beside it, or a capital follows
// a small letter, or two capitals are followed by small letters
// ("D A V I D m i l l e r").
func wordGap(run []foldedToken, k int) bool {
	sep := run[k].sep
	prevDiffers := k == 1 || run[k-1].sep != sep
	nextDiffers := k == len(run)-1 || run[k+1].sep != sep
	if prevDiffers && nextDiffers && len(run) > 2 {
		return true
	}
	if run[k-1].lower && !run[k].lower {
		return true
	}
	return k >= 2 && !run[k-2].lower && !run[k-1].lower && run[k].lower && k+1 < len(run) && run[k+1].lower
}

// plainSeparator reports whether sep is what stands between initials: spaces
// and dots.
func plainSeparator(sep string) bool {
	return strings.Trim(sep, " .") == ""
}

// innerHyphen reports whether the hyphen at rs[i] stands between two letters
// or digits (accents and joiners around it aside).
func innerHyphen(rs []rune, i int) bool {
	isPart := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	before, after := false, false
	for j := i - 1; j >= 0; j-- {
		if !unicode.In(rs[j], unicode.Mn, unicode.Me) {
			before = isPart(rs[j])
			break
		}
	}
	for j := i + 1; j < len(rs); j++ {
		if !isHyphen(rs[j]) {
			after = isPart(rs[j])
			break
		}
	}
	return before && after
}

// hasInnerHyphen reports whether name has a hyphen between two letters or
// digits, so that its joined reading differs from its split one.
func hasInnerHyphen(name string) bool {
	rs := []rune(norm.NFKD.String(prepare(name)))
	for i, r := range rs {
		if isHyphen(r) && innerHyphen(rs, i) {
			return true
		}
	}
	return false
}

// hyphenHidesWord reports whether joining the hyphenated words of name
// removes a word that screening drops (an article, a particle, a legal
// form): "Us-ama Bin La-din" splits into "LA" (dropped) and "DIN", so it is
// screened joined too. Other hyphenated words are found split, as two words
// or as one unit of neighbouring words (see query).
func hyphenHidesWord(name string) bool {
	if !hasInnerHyphen(name) {
		return false
	}
	joined := foldWords(name, true)
	for _, w := range foldWords(name, false) {
		if (droppedWords[w] || prefixWords[w]) && !slices.Contains(joined, w) {
			return true
		}
	}
	return false
}
