package screening

import (
	"strings"
	"unicode"

	"github.com/gosimple/unidecode"
	"golang.org/x/text/unicode/norm"
)

// This file turns a name written in any script into Latin letters before it
// is folded into words (see foldWords). It runs in three steps:
//
//  1. invisible characters are removed: format characters (soft hyphen,
//     zero-width space and joiners, bidirectional marks, word joiner, byte
//     order mark), other default-ignorable code points (Hangul fillers,
//     combining grapheme joiner) and variation selectors. They join the
//     letters around them, so "Us\u00ADama" reads "Usama".
//  2. Unicode compatibility folding (NFKC): full-width and other
//     compatibility forms become their plain letters ("Ｕｓａｍａ").
//  3. each word is put in Latin letters. A word mixing Latin letters with
//     Cyrillic or Greek ones, or a word made only of Cyrillic and Greek
//     letters that look Latin in a name otherwise written in Latin, has its
//     lookalikes replaced by the Latin letters they imitate ("Оsаmа" with
//     Cyrillic О and а). Other Cyrillic words are transliterated the way
//     OFAC spells Russian names; every other non-Latin script (Arabic,
//     Ethiopic, Greek, Hebrew, Han, Hangul, Kana, Thai, ...) through the
//     Unidecode tables of github.com/gosimple/unidecode, adjusted per script
//     where those tables read a name poorly (see transliterate).

// isInvisible reports whether r is removed before matching without splitting
// the word it is in.
func isInvisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		r == '\u034F' // combining grapheme joiner
}

// isWordSeparator reports whether r separates the words of a name although it
// is punctuation inside a word of some scripts: the katakana middle dot and
// the interpuncts that separate given name and surname in Japanese and
// Chinese transcriptions of foreign names.
func isWordSeparator(r rune) bool {
	switch r {
	case '\u30FB', '\uFF65', '\u00B7', '\u2027', '\u0387', '\u2E31':
		return true
	}
	return false
}

// isHyphen reports whether r is a hyphen or dash (after NFKC, which maps the
// full-width and small forms to '-').
func isHyphen(r rune) bool {
	return r == '-' || unicode.Is(unicode.Pd, r) || r == '\u2212'
}

// homoglyphs maps Cyrillic and Greek letters to the Latin letters they are
// drawn like. Used only in words that mix them with Latin letters (or that
// stand in a Latin-script name made only of such letters): there they are
// disguise, not Russian or Greek.
var homoglyphs = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C',
	'Т': 'T', 'У': 'Y', 'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W',
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i',
	'ј': 'j', 'ԁ': 'd', 'һ': 'h', 'ӏ': 'l', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
	'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'α': 'a', 'ι': 'i', 'κ': 'k',
	'ν': 'v', 'ρ': 'p', 'υ': 'u', 'χ': 'x', 'ε': 'e', 'τ': 't', 'ϲ': 'c', 'ϳ': 'j',
}

// cyrillicLatin transliterates upper-case Cyrillic letters the way OFAC
// spells Russian, Ukrainian and Belarusian names (a simplified BGN/PCGN).
var cyrillicLatin = map[rune]string{
	'А': "A", 'Б': "B", 'В': "V", 'Г': "G", 'Д': "D", 'Е': "E", 'Ж': "ZH", 'З': "Z",
	'И': "I", 'Й': "I", 'К': "K", 'Л': "L", 'М': "M", 'Н': "N", 'О': "O", 'П': "P", 'Р': "R",
	'С': "S", 'Т': "T", 'У': "U", 'Ф': "F", 'Х': "KH", 'Ц': "TS", 'Ч': "CH", 'Ш': "SH",
	'Щ': "SHCH", 'Ъ': "", 'Ы': "Y", 'Ь': "", 'Э': "E", 'Ю': "YU", 'Я': "YA", 'Ё': "E",
	'І': "I", 'Ї': "I", 'Є': "YE", 'Ґ': "G", 'Ў': "U",
}

// scriptOverrides replaces Unidecode readings that spell names poorly: the
// Thai letters for s and ch, the silent Thai vowel carrier, the Hebrew
// letters that mostly write vowels (so that they fold like the Arabic ones),
// Arabic letters whose reading is a symbol, and ghayn, which Unidecode reads
// G where Latin spellings write GH (Baghdadi).
var scriptOverrides = map[rune]string{
	'ซ': "s", 'จ': "ch", 'อ': "", 'ฤ': "ri", 'ッ': "", 'っ': "",
	'ו': "w", 'י': "y", 'א': "", 'ע': "", 'ח': "h",
	'غ': "gh", 'ى': "a", 'ة': "", 'ع': "", 'ء': "", 'أ': "", 'إ': "", 'ؤ': "", 'ئ': "",
}

// prepare returns name with invisible characters removed, compatibility
// forms folded and every word in Latin letters (see the file comment).
func prepare(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	ascii := true
	for _, r := range name {
		if r >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return name
	}
	for _, r := range name {
		switch {
		case isInvisible(r):
		case isWordSeparator(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s := norm.NFKC.String(b.String())
	words := splitScriptWords(s)
	latinName := false
	for _, w := range words {
		if w.word && w.latin > 0 {
			latinName = true
			break
		}
	}
	b.Reset()
	for _, w := range words {
		switch {
		case !w.word || w.other == 0 && w.cyrillic == 0 && w.greek == 0:
			b.WriteString(w.text)
		case w.other == 0 && (w.latin > 0 || latinName && w.allLookalike):
			for _, r := range w.text {
				if l, ok := homoglyphs[r]; ok {
					r = l
				}
				b.WriteRune(r)
			}
		default:
			transliterate(&b, w.text)
		}
	}
	return b.String()
}

// scriptWord is a run of letters, marks and digits (word) or of anything
// else, with counts of its letters by script.
type scriptWord struct {
	text                   string
	word                   bool
	latin, cyrillic, greek int
	other                  int  // letters of any other script
	allLookalike           bool // every Cyrillic or Greek letter has a Latin lookalike
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) || isJoiner(r)
}

func splitScriptWords(s string) []scriptWord {
	var out []scriptWord
	start := 0
	inWord := false
	flush := func(end int) {
		if end == start {
			return
		}
		w := scriptWord{text: s[start:end], word: inWord, allLookalike: true}
		if inWord {
			for _, r := range w.text {
				switch {
				case !unicode.IsLetter(r):
				case unicode.Is(unicode.Latin, r):
					w.latin++
				case unicode.Is(unicode.Cyrillic, r):
					w.cyrillic++
				case unicode.Is(unicode.Greek, r):
					w.greek++
				default:
					w.other++
				}
				if unicode.In(r, unicode.Cyrillic, unicode.Greek) && unicode.IsLetter(r) {
					if _, ok := homoglyphs[r]; !ok {
						w.allLookalike = false
					}
				}
			}
			w.allLookalike = w.allLookalike && w.cyrillic+w.greek > 0
		}
		out = append(out, w)
		start = end
	}
	for i, r := range s {
		if isWordRune(r) != inWord {
			flush(i)
			inWord = !inWord
		}
	}
	flush(len(s))
	return out
}

// transliterate writes word in Latin letters. Han characters and Hangul
// syllables are written as separate words (one per character or syllable),
// since a name's division into words is not marked in those scripts and
// segmentation matching joins them again.
func transliterate(b *strings.Builder, word string) {
	rs := []rune(word)
	if isArabic(rs[0]) && len(rs) > 3 && rs[0] == 'ا' && rs[1] == 'ل' {
		b.WriteString("al ") // the article written joined, al-
		rs = rs[2:]
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case unicode.Is(unicode.Thai, r) && unicode.In(r, unicode.Mn):
			// Thai writes most vowels as combining signs above or below
			// the consonant (นิ, บู): they are letters here, not accents
			// for NFKD to strip. Tone marks and the silencer ์ read "".
			writeScriptRune(b, r)
		case r < 0x80 || unicode.Is(unicode.Latin, r) || unicode.In(r, unicode.Mn, unicode.Me):
			b.WriteRune(r)
		case unicode.Is(unicode.Cyrillic, r):
			if t, ok := cyrillicLatin[unicode.ToUpper(r)]; ok {
				b.WriteString(t)
			} else {
				b.WriteString(unidecode.Unidecode(string(r)))
			}
		case unicode.Is(unicode.Greek, r):
			// Modern Greek writes b, d and g as μπ, ντ and γκ.
			if i+1 < len(rs) && unicode.ToLower(r) == 'μ' && unicode.ToLower(rs[i+1]) == 'π' {
				b.WriteByte('b')
				i++
				continue
			}
			if i+1 < len(rs) && unicode.ToLower(r) == 'ν' && unicode.ToLower(rs[i+1]) == 'τ' {
				b.WriteByte('d')
				i++
				continue
			}
			if i+1 < len(rs) && unicode.ToLower(r) == 'γ' && unicode.ToLower(rs[i+1]) == 'κ' {
				b.WriteByte('g')
				i++
				continue
			}
			if unicode.ToLower(r) == 'β' {
				b.WriteByte('v') // beta is v in modern Greek (Βίκτορ, Viktor)
				continue
			}
			b.WriteString(unidecode.Unidecode(string(r)))
		case r == 'อ' && i > 0 && rs[i-1] >= 0x0E01 && rs[i-1] <= 0x0E2E:
			// อ after a consonant is the vowel o (ตอ is to); elsewhere it
			// only carries a vowel and is silent.
			b.WriteByte('o')
		case r >= 0x0E40 && r <= 0x0E44 && i+1 < len(rs):
			// A Thai vowel written before the consonant it follows in
			// speech: read the consonant first.
			writeScriptRune(b, rs[i+1])
			writeScriptRune(b, r)
			i++
		case unicode.Is(unicode.Ethiopic, r):
			writeEthiopic(b, r)
		case unicode.Is(unicode.Hangul, r):
			writeHangul(b, r)
		case unicode.Is(unicode.Han, r):
			b.WriteByte(' ')
			b.WriteString(strings.TrimSpace(unidecode.Unidecode(string(r))))
			b.WriteByte(' ')
		case isSmallKana(r):
			// A small kana replaces the vowel of the syllable before it:
			// ディ is di, ファ is fa; after ji, shi and chi a small ya, yu,
			// yo is the vowel alone (ジョ is jo, as Hepburn writes it).
			trimLastVowel(b)
			t := kanaReading(r)
			if s := b.String(); len(t) == 2 && t[0] == 'y' && (strings.HasSuffix(s, "j") || strings.HasSuffix(s, "sh") || strings.HasSuffix(s, "ch")) {
				t = t[1:]
			}
			b.WriteString(t)
		case isKana(r):
			b.WriteString(kanaReading(r))
		default:
			writeScriptRune(b, r)
		}
	}
}

func isArabic(r rune) bool { return unicode.Is(unicode.Arabic, r) }

func writeScriptRune(b *strings.Builder, r rune) {
	if t, ok := scriptOverrides[r]; ok {
		b.WriteString(t)
		return
	}
	b.WriteString(cleanLatin(unidecode.Unidecode(string(r))))
}

// cleanLatin keeps the letters of a Unidecode reading, dropping the marks it
// uses for sounds Latin lacks (` for ayin, ' for hamza, @ for ta marbuta).
func cleanLatin(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ') {
			return r
		}
		return -1
	}, s)
}

// writeEthiopic writes a Ge'ez syllable. Unidecode reads the sixth order
// (the consonant with no vowel or a short ə, as in ን) as "ne"; names are
// spelt in Latin without that vowel, so it is dropped.
func writeEthiopic(b *strings.Builder, r rune) {
	t := cleanLatin(unidecode.Unidecode(string(r)))
	if r >= 0x1200 && r <= 0x135A && (r-0x1200)%8 == 5 && len(t) > 1 && strings.HasSuffix(t, "e") {
		t = t[:len(t)-1]
	}
	b.WriteString(t)
}

// writeHangul writes a Hangul syllable as a word of its own, with the
// Revised Romanization that Unidecode gives brought closer to the spelling of
// Korean names on sanctions lists (McCune-Reischauer): an initial G is K, B is P,
// EO is O and EU is U ("Gim Jeong Eun" reads "KIM JONG UN").
func writeHangul(b *strings.Builder, r rune) {
	t := strings.ToUpper(cleanLatin(unidecode.Unidecode(string(r))))
	switch {
	case strings.HasPrefix(t, "G"):
		t = "K" + t[1:]
	case strings.HasPrefix(t, "B"):
		t = "P" + t[1:]
	}
	t = strings.ReplaceAll(t, "EO", "O")
	t = strings.ReplaceAll(t, "EU", "U")
	b.WriteByte(' ')
	b.WriteString(t)
	b.WriteByte(' ')
}

func isSmallKana(r rune) bool {
	switch r {
	case 'ァ', 'ィ', 'ゥ', 'ェ', 'ォ', 'ャ', 'ュ', 'ョ', 'ぁ', 'ぃ', 'ぅ', 'ぇ', 'ぉ', 'ゃ', 'ゅ', 'ょ':
		return true
	}
	return false
}

// trimLastVowel removes the last byte written when it is a vowel.
func trimLastVowel(b *strings.Builder) {
	s := b.String()
	if n := len(s); n > 0 && strings.ContainsRune("aeiouAEIOU", rune(s[n-1])) {
		s = s[:n-1]
		b.Reset()
		b.WriteString(s)
	}
}

// hepburn corrects the kana that Unidecode reads in the Kunrei system
// (si, zi, ti, tu, hu) to the Hepburn spelling that Latin renderings of names
// use (shi, ji, chi, tsu, fu): ジョセフ is Joseph, not Zyosehu.
var hepburn = map[rune]string{
	'シ': "shi", 'し': "shi", 'ジ': "ji", 'じ': "ji", 'チ': "chi", 'ち': "chi", 'ヂ': "ji", 'ぢ': "ji",
	'ツ': "tsu", 'つ': "tsu", 'ヅ': "zu", 'づ': "zu", 'フ': "fu", 'ふ': "fu",
}

func isKana(r rune) bool { return unicode.In(r, unicode.Katakana, unicode.Hiragana) }

// kanaReading is the Hepburn reading of a kana.
func kanaReading(r rune) string {
	if t, ok := hepburn[r]; ok {
		return t
	}
	if t, ok := scriptOverrides[r]; ok {
		return t
	}
	return cleanLatin(unidecode.Unidecode(string(r)))
}

// liquidReading returns name with its Kana and Hangul read the second way a
// foreign name written in them can be meant, and ok when it has any.
// Japanese and Korean have one liquid, which the romanisations write R
// (ラディン, 라덴) and which stands for the L of most foreign names (Ladin,
// Laden); they add a vowel after a final consonant (ニコラス Nikorasu for
// Nicolas); and a Hangul name is one word, not the syllables the first
// reading splits it into. The alternative reading writes L, drops that
// final U, and keeps Hangul words whole: ニコラス is NIKOLAS, 오사마 빈 라덴
// OSAMA PIN LADEN. Screening reads such a name both ways and keeps the
// better score of each entry.
func liquidReading(name string) (string, bool) {
	found := false
	for _, r := range name {
		if isKana(r) || unicode.Is(unicode.Hangul, r) {
			found = true
			break
		}
	}
	if !found {
		return "", false
	}
	var out, run strings.Builder
	flush := func() {
		if run.Len() == 0 {
			return
		}
		var t strings.Builder
		transliterate(&t, run.String())
		run.Reset()
		word := strings.ToLower(strings.ReplaceAll(t.String(), " ", ""))
		word = strings.ReplaceAll(word, "r", "l")
		if n := len(word); n > 2 && word[n-1] == 'u' && !strings.ContainsRune("aeiouy", rune(word[n-2])) {
			word = word[:n-1]
		}
		out.WriteString(word)
	}
	for _, r := range name {
		if isKana(r) && !isWordSeparator(r) || unicode.Is(unicode.Hangul, r) || r == 'ー' {
			run.WriteRune(r)
			continue
		}
		flush()
		out.WriteRune(r)
	}
	flush()
	return out.String(), true
}
