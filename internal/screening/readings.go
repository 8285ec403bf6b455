package screening

import (
	"strings"
	"unicode"
)

// scriptReadings returns the further readings of a name written in Hangul,
// Hebrew or Japanese kanji, each a name in Latin letters that screening
// compares too, keeping the better score of each entry (see List.screen):
//
//   - Hangul: the syllables read by payd's own table in the three systems
//     Korean names are written in on sanctions lists and elsewhere: the North
//     Korean official romanisation the SDN list uses for DPRK names ("JONG",
//     "CHOE", "PYONG"), McCune-Reischauer without its marks ("CHONG"), and the
//     South Korean Revised Romanization ("JEONG", "BYEONG"). Final consonants
//     are read as pronounced (식 SIK, not Unidecode's SIG).
//   - Hebrew: the letters that also write vowels read as vowels (vav O or U,
//     yod I, alef and ayin A, a final he A), and an A put between two
//     consonants that open or close a word, where Hebrew writes a vowel
//     point or nothing (בשאר BASHAR, אסד ASAD): see hebrewReading.
//   - Han: when the name has kana, or its kanji are in payd's table of
//     Japanese name readings (japaneseReadings), the Japanese (Hepburn)
//     reading beside the Mandarin one Unidecode gives (高山 TAKAYAMA, not
//     GAO SHAN).
func scriptReadings(name string) []string {
	var hangul, hebrew, han bool
	for _, r := range name {
		switch {
		case unicode.Is(unicode.Hangul, r):
			hangul = true
		case unicode.Is(unicode.Hebrew, r):
			hebrew = true
		case unicode.Is(unicode.Han, r):
			han = true
		}
	}
	var out []string
	if hangul {
		for system := range hangulSystems {
			out = append(out, hangulReading(name, system))
		}
	}
	if hebrew {
		out = append(out, hebrewReading(name, 'O', true), hebrewReading(name, 'U', true), hebrewReading(name, 'O', false))
	}
	if han {
		if r, ok := japaneseReading(name); ok {
			out = append(out, r)
		}
	}
	return out
}

// Hangul syllables are 0xAC00 + (initial*21 + medial)*28 + final.
const (
	hangulBase    = 0xAC00
	hangulLast    = 0xD7A3
	hangulMedials = 21
	hangulFinals  = 28
)

// hangulSystems are the romanisations read: initial consonants and medial
// vowels per system. Final consonants are read the same in all three
// (hangulFinal).
var hangulSystems = [3]struct {
	initial [19]string
	medial  [21]string
}{
	// North Korean official romanisation, as the SDN list writes DPRK names.
	{
		initial: [19]string{"K", "KK", "N", "T", "TT", "R", "M", "P", "PP", "S", "SS", "", "J", "JJ", "CH", "KH", "TH", "PH", "H"},
		medial:  [21]string{"A", "AE", "YA", "YAE", "O", "E", "YO", "YE", "O", "WA", "WAE", "OE", "YO", "U", "WO", "WE", "WI", "YU", "U", "UI", "I"},
	},
	// McCune-Reischauer without its breves and apostrophes.
	{
		initial: [19]string{"K", "KK", "N", "T", "TT", "R", "M", "P", "PP", "S", "SS", "", "CH", "TCH", "CH", "K", "T", "P", "H"},
		medial:  [21]string{"A", "AE", "YA", "YAE", "O", "E", "YO", "YE", "O", "WA", "WAE", "OE", "YO", "U", "WO", "WE", "WI", "YU", "U", "UI", "I"},
	},
	// Revised Romanization (South Korea).
	{
		initial: [19]string{"G", "KK", "N", "D", "TT", "R", "M", "B", "PP", "S", "SS", "", "J", "JJ", "CH", "K", "T", "P", "H"},
		medial:  [21]string{"A", "AE", "YA", "YAE", "EO", "E", "YEO", "YE", "O", "WA", "WAE", "OE", "YO", "U", "WO", "WE", "WI", "YU", "EU", "UI", "I"},
	},
}

// hangulFinal is the sound of each final consonant (index 0: none).
var hangulFinal = [28]string{"", "K", "K", "K", "N", "N", "N", "T", "L", "K", "M", "L", "L", "L", "P", "L", "M", "P", "P", "T", "T", "NG", "T", "T", "K", "T", "P", "T"}

// hangulReading writes every Hangul syllable of name as a word of its own in
// the given system, leaving the rest of the name as it is.
func hangulReading(name string, system int) string {
	sys := &hangulSystems[system]
	var b strings.Builder
	for _, r := range name {
		if r < hangulBase || r > hangulLast {
			b.WriteRune(r)
			continue
		}
		n := int(r - hangulBase)
		initial, medial, final := n/(hangulMedials*hangulFinals), n/hangulFinals%hangulMedials, n%hangulFinals
		b.WriteByte(' ')
		b.WriteString(sys.initial[initial])
		b.WriteString(sys.medial[medial])
		b.WriteString(hangulFinal[final])
		b.WriteByte(' ')
	}
	return b.String()
}

// hebrewConsonants reads the Hebrew letters that write consonants only.
var hebrewConsonants = map[rune]string{
	'ב': "B", 'ג': "G", 'ד': "D", 'ז': "Z", 'ח': "H", 'ט': "T", 'כ': "K", 'ך': "KH", 'ל': "L",
	'מ': "M", 'ם': "M", 'נ': "N", 'ן': "N", 'ס': "S", 'פ': "P", 'ף': "F", 'צ': "TS", 'ץ': "TS",
	'ק': "K", 'ר': "R", 'ש': "SH", 'ת': "T",
}

// hebrewReading reads the Hebrew words of name with vowels: vav is vav
// (O or U), or V at the start of a word or doubled; yod is I, or Y at the
// start of a word or doubled; alef and ayin are A, or silent before vav or
// yod at the start of a word (אוסאמה OSAMA, איגור IGOR); a final he is A.
// With clusters, an A is put between the two consonants that begin or end
// a word (בשאר BASHAR, ניקולס NIKOLAS), where Hebrew writes no vowel letter.
func hebrewReading(name string, vav rune, clusters bool) string {
	var b strings.Builder
	rs := []rune(name)
	for i := 0; i < len(rs); {
		if !unicode.Is(unicode.Hebrew, rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && unicode.Is(unicode.Hebrew, rs[j]) {
			j++
		}
		b.WriteString(hebrewWord(rs[i:j], vav, clusters))
		i = j
	}
	return b.String()
}

func hebrewWord(w []rune, vav rune, clusters bool) string {
	// letters read, with whether each is a consonant
	var letters []string
	var consonant []bool
	add := func(s string, c bool) {
		letters = append(letters, s)
		consonant = append(consonant, c)
	}
	for i := 0; i < len(w); i++ {
		r := w[i]
		if unicode.In(r, unicode.Mn) {
			continue // points and cantillation
		}
		next := rune(0)
		if i+1 < len(w) {
			next = w[i+1]
		}
		if geresh := next == '\u05F3' || next == '\''; geresh {
			// A geresh marks a sound Hebrew lacks: צ׳ ch, ג׳ j, ז׳ zh.
			if t, ok := map[rune]string{'צ': "CH", 'ץ': "CH", 'ג': "J", 'ז': "ZH"}[r]; ok {
				add(t, true)
				i++
				continue
			}
		}
		switch r {
		case 'ו':
			switch {
			case next == 'ו':
				add("V", true)
				i++
			case i == 0:
				add("V", true)
			default:
				add(string(vav), false)
			}
		case 'י':
			switch {
			case next == 'י':
				add("Y", true)
				i++
			case i == 0 && next != 0 && next != 'ו' && next != 'י':
				add("Y", true)
			default:
				add("I", false)
			}
		case 'א', 'ע':
			if i == 0 && (next == 'ו' || next == 'י') {
				continue
			}
			add("A", false)
		case 'ה':
			if i == len(w)-1 {
				add("A", false)
			} else {
				add("H", true)
			}
		default:
			if t, ok := hebrewConsonants[r]; ok {
				add(t, true)
			}
		}
	}
	var b strings.Builder
	for k, s := range letters {
		b.WriteString(s)
		if !clusters || k+1 >= len(letters) || !consonant[k] || !consonant[k+1] {
			continue
		}
		if k == 0 || k+2 == len(letters) {
			b.WriteByte('A')
		}
	}
	return b.String()
}
