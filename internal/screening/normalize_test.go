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
	want := []nameWord{{"IGOR", false, false}, {"VSEVOLODOVICH", true, false}, {"GIRKIN", false, true}}
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

// TestSpelledLettersJoin: single letters joined by any separator, and runs of
// single letters, are read as the words they spell, divided where the
// separator or the case says a word ends; two initials stay initials.
func TestSpelledLettersJoin(t *testing.T) {
	tests := []struct{ in, want string }{
		{"D-a-v-i-d M-i-l-l-e-r", "DAVID MILER"},
		{"D a v i d M i l l e r", "DAVID MILER"},
		{"D_a_v_i_d", "DAVID"},
		{"D~a~v~i~d M~i~l~l~e~r", "DAVID MILER"},
		{"D*a*v*i*d M*i*l*l*e*r", "DAVID MILER"},
		{"D|a|v|i|d/M+i+l+l+e+r", "DAVID MILER"},
		{"D A V I D  M I L L E R", "DAVID MILER"},     // a wider gap
		{"D A V I D m i l l e r", "DAVID MILER"},      // the case changes
		{"D A V I D M I L L E R", "DAVIDMILER"},       // nothing divides it: see TestSpelledReading
		{"D. A. V. I. D.", "DAVID"},                   // dots and spaces
		{"J K Rowling", "J K ROWLING"},                // two initials
		{"J.K. Rowling", "JK ROWLING"},                // as before
		{"A-l Rowling", "ROWLING"},                    // two letters joined by a hyphen spell a word (here a dropped one)
		{"Kim Jong Un", "KIM JONG UN"},                // no single letters
		{"Route 6 7 8 Trading", "RUTE 6 7 8 TRADING"}, // digits are not spelled letters
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSpelledReading: a run of letters nothing divides is divided by the
// list's words, in any order, with dropped words and one unknown word
// allowed; a run that spells no listed word is not divided.
func TestSpelledReading(t *testing.T) {
	l := evalList(t)
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"U S A M A B I N L A D I N", "USAMA BIN LADIN", true},
		{"M A D U R O M O R O S N I C O L A S", "MADURO MOROS NICOLAS", true},
		{"A W E Y S H A S S A N", "AWEYS HASSAN", true},
		{"X Y Z Q W E R T Y M A D U R O", "XYZQWERTY MADURO", true}, // one part not on the list
		{"Q W E R T Y U I O P", "", false},
		{"Hassan Aweys", "", false}, // nothing spelled out
	}
	for _, tt := range tests {
		got, ok := l.spelledReading(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("spelledReading(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDottedLettersAreSpelled(t *testing.T) {
	tests := []struct {
		in      string
		spelled bool
	}{
		{"A.W.E.Y.S.H.A.S.S.A.N", true},
		{"A.W.E.Y.S", true},
		{"U.S.A.", true},
		{"S.A.", false},     // two letters: initials or a legal form
		{"ST.JOHN", false},  // not one letter a dot
		{"Sa'id", false},    // an apostrophe joins, spells nothing
		{"J.R.R.R", true},   // the last letter needs no dot
		{"AB.C.D.E", false}, // a segment of two letters
	}
	for _, tt := range tests {
		_, spelled := foldSpelled(tt.in, false, true)
		if len(spelled) != 1 || spelled[0] != tt.spelled {
			t.Errorf("foldSpelled(%q) spelled %v, want [%v]", tt.in, spelled, tt.spelled)
		}
	}
}
