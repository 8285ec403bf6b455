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
// splits the word, or with joinHyphens joins its two halves. It works rune by
// rune, so text in any script passes through without error.
func foldWords(s string, joinHyphens bool) []string {
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(norm.NFKD.String(prepare(s)))
	for i, r := range rs {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me):
			// combining accent left by the decomposition
		case isJoiner(r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = unicode.ToUpper(r)
			if t, ok := foldSpecial[r]; ok {
				b.WriteString(t)
			} else {
				b.WriteRune(r)
			}
		case joinHyphens && isHyphen(r) && innerHyphen(rs, i):
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
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
