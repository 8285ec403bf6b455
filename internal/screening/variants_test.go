package screening

import "testing"

// TestScriptReadings checks the readings that the evaluation showed
// Unidecode alone gets wrong: Thai vowel signs, Greek beta, kana in Hepburn,
// Russian Дж, Arabic ghayn.
func TestScriptReadings(t *testing.T) {
	tests := []struct{ name, want string }{
		{"นิโคลัส มาดูโร", "NIKHOLAS MADURO"}, // vowel signs above and below, vowel before its consonant
		{"วิกตอร์ บูต", "WIKTOR BUT"},         // อ after a consonant is o; ์ silences nothing we keep
		{"Βίκτορ Μπουτ", "VIKTOR BUT"},        // beta is v, μπ is b
		{"ジョセフ・コニー", "JOSEFU KONI"},           // ジョ is jo, フ is fu
		{"シチツ", "SHICHITSU"},
		{"Джозеф Кони", "JOZEF KONI"}, // ДЖ read DZH, folded to J
		{"البغدادي", "BGHDY"},         // ghayn is GH (Unidecode: G); alif writes nothing
	}
	for _, tt := range tests {
		if got := Normalize(tt.name); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLiquidReading(t *testing.T) {
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"ニコラス・マドゥロ", "NIKOLAS MADULO", true}, // L for the liquid, no added final vowel
		{"ウサーマ・ビン・ラーディン", "USAMA LADIN", true},
		{"오사마 빈 라덴", "OSAMA PIN LADEN", true}, // Hangul words kept whole
		{"Nicolas Maduro", "", false},
		{"Усама", "", false},
	}
	for _, tt := range tests {
		got, ok := liquidReading(tt.name)
		if ok != tt.ok || ok && Normalize(got) != tt.want {
			t.Errorf("liquidReading(%q) = %q (%q), %v; want %q, %v", tt.name, got, Normalize(got), ok, tt.want, tt.ok)
		}
	}
}

func TestVowelFrame(t *testing.T) {
	tests := []struct{ a, b string }{
		{"MAHAMAD", "MOHAMED"}, {"HEZBOLA", "HIZBALA"}, {"SHIKAW", "SHEKAU"}, {"ABUBAKAR", "ABUBAKR"},
	}
	for _, tt := range tests {
		fa, fb := string(vowelFrame([]rune(tt.a))), string(vowelFrame([]rune(tt.b)))
		same := fa == fb
		if tt.a == "ABUBAKAR" {
			same = !same // a vowel dropped is a different frame: found by Jaro-Winkler instead
		}
		if !same {
			t.Errorf("vowelFrame(%s) = %s, vowelFrame(%s) = %s", tt.a, fa, tt.b, fb)
		}
	}
	if f := vowelFrame([]rune("HUSEIN")); string(f) != "H*S*N" {
		t.Errorf("vowelFrame(HUSEIN) = %s, want H*S*N", string(f))
	}
}

// TestLongVowelsAgree: the loose consonant skeleton of a word read from
// Arabic script (W and Y dropped) pairs only where its W and Y stand at the
// listed word's long vowels.
func TestLongVowelsAgree(t *testing.T) {
	tests := []struct {
		q, term string
		want    bool
	}{
		{"MHMWD", "MAHMUD", true},   // محمود is Mahmud
		{"MHMWD", "MOHAMED", false}, // not Mohamed
		{"MHMD", "MOHAMED", true},   // محمد writes no vowel: either
		{"MHMD", "MAHMUD", true},
		{"ḤSYN", "HUSAYN", false}, // not A to Z: no skeleton
		{"HSYN", "HUSEIN", true},
		{"HSYN", "HASAN", false},
	}
	for _, tt := range tests {
		if got := longVowelsAgree([]rune(tt.q), []rune(tt.term)); got != tt.want {
			t.Errorf("longVowelsAgree(%s, %s) = %v, want %v", tt.q, tt.term, got, tt.want)
		}
	}
}

func TestSoundAlikeAndWordSimilarity(t *testing.T) {
	for _, p := range []string{"TD", "VW", "KG", "QK", "SZ", "JY"} {
		if !soundAlike(rune(p[0]), rune(p[1])) {
			t.Errorf("soundAlike(%c, %c) = false", p[0], p[1])
		}
	}
	for _, p := range []string{"AS", "AE", "MN", "HK"} {
		if soundAlike(rune(p[0]), rune(p[1])) {
			t.Errorf("soundAlike(%c, %c) = true", p[0], p[1])
		}
	}
	// No prefix bonus for words two or more runes apart.
	if a, b := []rune("NASER"), []rune("NASRALA"); wordSimilarity(a, b) >= jaroWinkler(a, b) {
		t.Errorf("wordSimilarity(NASER, NASRALA) %.3f not below Jaro-Winkler %.3f", wordSimilarity(a, b), jaroWinkler(a, b))
	}
	if a, b := []rune("MARTHA"), []rune("MARHTA"); wordSimilarity(a, b) != jaroWinkler(a, b) {
		t.Error("wordSimilarity differs from Jaro-Winkler for words of one length")
	}
}

// TestMatcherVariants screens, against the evaluation list, one name for
// each cause of a miss or false hit the evaluation showed, so that each
// cause stays fixed on its own.
func TestMatcherVariants(t *testing.T) {
	l := evalList(t)
	hits := []struct {
		name  string
		entry int
		why   string
	}{
		{"መሐመድ ሚሬ ዓሊ ዩሱፍ", 23719, "Ge'ez vowels: vowel frame"},
		{"Hezbollah", 4697, "vowel frame of a single word"},
		{"حسن ظاهر عويس", 7006, "ظ read D in the skeleton"},
		{"أبو بكر البغدادي", 12926, "ghayn GH"},
		{"Hassan Tahir Aweys", 7006, "T/D first letters"},
		{"วิกตอร์ บูต", 8279, "Thai W for V"},
		{"ニコラス・マドゥロ", 22790, "liquid reading"},
		{"오사마 빈 라덴", 6365, "Hangul whole words"},
		{"Kim Jongun", 20157, "listed short words joined"},
		{"Джозеф Кони", 11018, "DZH"},
	}
	for _, h := range hits {
		r := l.Screen(h.name, Options{})
		found := false
		for _, m := range r.Matches {
			found = found || m.EntryID == h.entry
		}
		if !found {
			t.Errorf("%s (%q): %+v, want entry %d", h.why, h.name, r.Matches, h.entry)
		}
	}
	for _, name := range []string{"Bashir Asadullah", "Hassan Nasser", "أحمد محمود", "Walid Hassan", "Said Elmi"} {
		if r := l.Screen(name, Options{}); r.Status != StatusClear {
			t.Errorf("%q: %s %+v, want clear", name, r.Status, r.Matches)
		}
	}
}
