package screening

// canonicalWord folds spelling variants that transliteration produces for the
// same sound, so that they compare equal or nearly so:
//
//   - PH→F, DJ→J (French "Djama" and English "Jama"), DZH→J (Russian
//     "Dzhozef" for "Joseph"), TCH→CH, SCH→SH, CK→K,
//     Q→K ("Qadir", "Kadir");
//   - OU→U ("Moussa", "Musa"), EE→I, OO→U;
//   - X between vowels→H (Somali "Maxamed" for "Mohamed");
//   - doubled letters single ("Mohammed", "Mohamed"; "Hassan", "Hasan");
//   - a final H after a vowel dropped ("Abdullah", "Abdulla").
//
// The same folding is applied to listed and screened names, so an exact
// spelling still matches exactly. Words outside the Latin alphabet pass through
// unchanged.
func canonicalWord(w string) string {
	r := []rune(w)
	out := make([]rune, 0, len(r))
	for i := 0; i < len(r); i++ {
		c := r[i]
		next := rune(0)
		if i+1 < len(r) {
			next = r[i+1]
		}
		switch {
		case c == 'P' && next == 'H':
			c, i = 'F', i+1
		case c == 'D' && next == 'J':
			c, i = 'J', i+1
		case c == 'D' && next == 'Z' && i+2 < len(r) && r[i+2] == 'H':
			c, i = 'J', i+2 // Russian Дж: DZHOZEF is Joseph, DZHOKHAR Jokhar
		case c == 'T' && next == 'C' && i+2 < len(r) && r[i+2] == 'H':
			i++ // TCH -> CH
			continue
		case c == 'S' && next == 'C' && i+2 < len(r) && r[i+2] == 'H':
			c, i = 'S', i+2
			out = append(out, 'S', 'H')
			continue
		case c == 'C' && next == 'K':
			c, i = 'K', i+1
		case c == 'Q':
			c = 'K'
		case c == 'O' && next == 'U':
			c, i = 'U', i+1
		case c == 'E' && next == 'E':
			c, i = 'I', i+1
		case c == 'O' && next == 'O':
			c, i = 'U', i+1
		case c == 'X' && i > 0 && isVowel(r[i-1]) && isVowel(next):
			c = 'H'
		}
		if n := len(out); n > 0 && out[n-1] == c && isLatinLetter(c) {
			continue // doubled letter
		}
		out = append(out, c)
	}
	if n := len(out); n > 3 && out[n-1] == 'H' && isVowel(out[n-2]) {
		out = out[:n-1]
	}
	return string(out)
}

func isVowel(r rune) bool {
	switch r {
	case 'A', 'E', 'I', 'O', 'U', 'Y':
		return true
	}
	return false
}

func isLatinLetter(r rune) bool { return r >= 'A' && r <= 'Z' }

// vowelFolded returns w with the vowels that transliteration swaps most
// folded together (O and U; E and A; Y and I), so that "Mohamed" and
// "Muhammad", "Husayn" and "Hussein", "Omar" and "Umar" compare equal. It is a
// second, discounted comparison next to the canonical spelling, not a
// replacement for it: folding alone would also equate different names.
func vowelFolded(w []rune) []rune {
	out := make([]rune, len(w))
	for i, r := range w {
		switch r {
		case 'O':
			r = 'U'
		case 'E':
			r = 'A'
		case 'Y':
			r = 'I'
		}
		out[i] = r
	}
	return out
}

// vowelFrame returns w with every run of vowels (A, E, I, O, U) replaced by
// one mark, keeping the consonants: "MAHAMAD", "MOHAMED" and "MUHAMAD" all
// give M*H*M*D, "HEZBOLA" and "HIZBALA" H*ZB*L*; a final W or Y after a
// vowel is part of the vowel. Names transliterated from
// scripts whose vowels Latin renders in many ways (Ge'ez, whose first and
// sixth orders are written a, e, i or nothing; Arabic's three short vowels)
// differ mostly in their vowels, so equal frames are a third, more
// discounted comparison (frameFactor), for frames of at least minFrame runes.
// Only equal frames count: a consonant more or less is another name.
func vowelFrame(w []rune) []rune {
	out := make([]rune, 0, len(w))
	for i, r := range w {
		if (r == 'W' || r == 'Y') && i == len(w)-1 && i > 0 && isVowel(w[i-1]) {
			r = 'U' // a final diphthong: "SHEKAU", "SHIKAW"
		}
		switch r {
		case 'A', 'E', 'I', 'O', 'U':
			if n := len(out); n > 0 && out[n-1] == '*' {
				continue
			}
			r = '*'
		}
		out = append(out, r)
	}
	return out
}

// minFrame is the shortest vowel frame compared: shorter ones ("*L*",
// "*M*R") are shared by too many different names.
const minFrame = 4
