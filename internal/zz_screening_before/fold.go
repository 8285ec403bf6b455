package screening

import (
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

// cyrillicLatin transliterates upper-case Cyrillic letters the way OFAC
// spells Russian, Ukrainian and Belarusian names (a simplified BGN/PCGN).
// Й and Ё decompose to И and Е under NFKD before this table is consulted.
var cyrillicLatin = map[rune]string{
	'А': "A", 'Б': "B", 'В': "V", 'Г': "G", 'Д': "D", 'Е': "E", 'Ж': "ZH", 'З': "Z",
	'И': "I", 'К': "K", 'Л': "L", 'М': "M", 'Н': "N", 'О': "O", 'П': "P", 'Р': "R",
	'С': "S", 'Т': "T", 'У': "U", 'Ф': "F", 'Х': "KH", 'Ц': "TS", 'Ч': "CH", 'Ш': "SH",
	'Щ': "SHCH", 'Ъ': "", 'Ы': "Y", 'Ь': "", 'Э': "E", 'Ю': "YU", 'Я': "YA",
	'І': "I", 'Є': "YE", 'Ґ': "G", 'Ў': "U",
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

// foldWords upper-cases s, strips accents and other combining marks,
// transliterates Cyrillic, drops apostrophes and dots, and splits the rest on
// anything that is not a letter or a digit. It works rune by rune, so text in
// any script passes through without error; scripts other than Latin and
// Cyrillic are kept as they are.
func foldWords(s string) []string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me):
			// combining accent left by the decomposition
		case isJoiner(r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = unicode.ToUpper(r)
			if t, ok := foldSpecial[r]; ok {
				b.WriteString(t)
			} else if t, ok := cyrillicLatin[r]; ok {
				b.WriteString(t)
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}
