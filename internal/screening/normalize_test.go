package screening

import (
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"Mohamed Ali", "MOHAMED ALI"},
		{"  mohamed   ALI  ", "MOHAMED ALI"},                            // case and repeated spaces
		{"Mohammed", "MOHAMED"},                                         // doubled letters
		{"Jérôme Kakwavu", "JEROME KAKWAVU"},                            // accents
		{"Marko Jakšić", "MARKO JAKSIC"},                                // diacritics
		{"Øystein Ærø Straße", "OYSTEIN AERO STRASE"},                   // letters NFKD keeps whole
		{"SA'ID, Mohamed", "MOHAMED SAID"},                              // apostrophe joins; LAST, First reordered
		{"AL-TURKI, Hassan Abdullah Hersi", "HASAN ABDULA HERSI TURKI"}, // article dropped
		{"Abd al-Rahman", "ABDRAHMAN"},                                  // prefix joined to the next word
		{"Abdul Rahman", "ABDULRAHMAN"},
		{"Abu Bakr", "ABUBAKR"},
		{"Usama bin Muhammad bin Awad", "USAMA MUHAMAD AWAD"}, // filiation dropped
		{"ANGLO-CARIBBEAN CO., LTD.", "ANGLO CARIBEAN"},       // legal forms dropped
		{"Banco Nacional de Cuba S.A.", "BANCO NACIONAL CUBA"},
		{"PALM GROVE AFRICA DEV'T CORP. LTD", "PALM GROVE AFRICA DEVELOPMENT"}, // abbreviation
		{"Moussa Djama", "MUSA JAMA"},                                          // French transliteration
		{"Maxamed Cabdullaahi", "MAHAMED CABDULAHI"},                           // Somali orthography
		{"Philippe Schmidt", "FILIPE SHMIDT"},
		{"Qasim", "KASIM"},
		{"Хорошев Дмитрий", "KHOROSHEV DMITRI"}, // Cyrillic
		{"DELOS REYES, Feliciano Semborio, Jr.", "FELICIANO SEMBORIO DELOS REYES"},
		{"Dr. Ayman AL ZAWAHIRI", "AYMAN ZAWAHIRI"},    // title dropped
		{"AL-SHAYKH, Muhammad", "MUHAMAD SHAYKH"},      // a surname of dropped words is kept
		{"OMAR, Omar Awadh", "OMAR AWADH OMAR"},        // repeated words stay
		{"The Company Limited", "THE COMPANY LIMITED"}, // nothing left: words kept
		{"محمد علي", "MHMD LY"},                        // Arabic script, transliterated
		{"--- ...", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Normalize(tt.name); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNameWordsMarksMiddleNames(t *testing.T) {
	words := nameWords("GIRKIN, Igor Vsevolodovich", true, false)
	want := []nameWord{{"IGOR", false}, {"VSEVOLODOVICH", true}, {"GIRKIN", false}}
	if len(words) != len(want) {
		t.Fatalf("nameWords = %v, want %v", words, want)
	}
	for i := range want {
		if words[i] != want[i] {
			t.Errorf("word %d = %v, want %v", i, words[i], want[i])
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"Mohamed Ali", "SA'ID, Mohamed", "Хорошев", "محمد", "a,b,c,,", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := Normalize(name)
		if !utf8.ValidString(got) && utf8.ValidString(name) {
			t.Fatalf("Normalize(%q) = %q is not valid UTF-8", name, got)
		}
	})
}
