package screening

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func fixtureList(t *testing.T) *List {
	t.Helper()
	l, err := Load(context.Background(), fixturePath(t))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestScreenFixture(t *testing.T) {
	l := fixtureList(t)
	tests := []struct {
		name    string
		status  string
		entry   int
		alias   bool
		typ     string
		matched string
	}{
		{"Dmitry Khoroshev", StatusHit, 48603, false, TypeIndividual, "KHOROSHEV, Dmitry Yuryevich"},
		{"Dmitriy Yurevich Khoroshev", StatusHit, 48603, true, TypeIndividual, "KHOROSHEV, Dmitriy Yurevich"},
		{"khoroshev, dmitrii", StatusHit, 48603, true, TypeIndividual, "KHOROSHEV, Dmitrii Yuryevich"},
		{"Хорошев Дмитрий Юрьевич", StatusHit, 48603, true, TypeIndividual, "KHOROSHEV, Dmitrii Yuryevich"},
		{"Artem Lifshits", StatusHit, 29702, false, TypeIndividual, "LIFSHITS, Artem Mikhaylovich"},
		{"Elvis Logan Morey", StatusHit, 10278, false, TypeIndividual, "LOGAN MOREY, Elvis Angus"},
		{"Iris Makran", StatusHit, 40716, false, TypeVessel, "IRIS MAKRAN"},
		{"EP PUS", StatusHit, 48727, false, TypeAircraft, "EP-PUS"},
		{"Aircraft Avionics Parts and Support Limited", StatusHit, 19709, false, TypeEntity, "AIRCRAFT, AVIONICS, PARTS & SUPPORT LTD."},
		{"HESA Trade Centre", StatusHit, 11195, true, TypeEntity, "HESA TRADE CENTER"},
		{"TNK Trading International SA", StatusHit, 28603, false, TypeEntity, "TNK TRADING INTERNATIONAL S.A."},
		{"Daniel Moreno", StatusHit, 15102, false, TypeIndividual, "MORENO, Daniel"},
		{"Jean Dupont", StatusClear, 0, false, "", ""},
		{"Fatouma Ahmed Houssein", StatusClear, 0, false, "", ""},
		{"Dmitry Ivanov", StatusClear, 0, false, "", ""},
		{"Tasca Trading", StatusClear, 0, false, "", ""},
		{"محمد علي", StatusClear, 0, false, "", ""},
		{"", StatusNotScreened, 0, false, "", ""},
		{"   \t ", StatusNotScreened, 0, false, "", ""},
		{"-- . --", StatusNotScreened, 0, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.Screen(tt.name, Options{})
			if r.Status != tt.status {
				t.Fatalf("Status = %q (%+v), want %q", r.Status, r.Matches, tt.status)
			}
			if tt.status != StatusHit {
				if len(r.Matches) != 0 {
					t.Errorf("Matches = %+v, want none", r.Matches)
				}
				return
			}
			m := r.Matches[0]
			if m.EntryID != tt.entry || m.IsAlias != tt.alias || m.Type != tt.typ || m.MatchedName != tt.matched {
				t.Errorf("best match = %+v, want entry %d alias %v type %s name %q", m, tt.entry, tt.alias, tt.typ, tt.matched)
			}
			if m.Score < DefaultThreshold || m.Score > 1 {
				t.Errorf("score %.3f outside [threshold, 1]", m.Score)
			}
		})
	}
}

func TestScreenFullList(t *testing.T) {
	l := fullList(t)
	tests := []struct {
		name  string
		entry int // 0: clear
	}{
		{"Osama bin Laden", 6365},
		{"Usama Binladen", 6365},
		{"Hasan Dahir Awees", 7006},
		{"Nicolás Maduro Moros", 22790},
		{"Igor Girkin", 16961},
		{"Mohammed Hamza al-Zubaidi", 7851},
		{"Banco Nacional de Cuba", 306},
		{"Hamas", 4695},
		{"Hassan Dahir Aweys Abdi Farah Guedi Robleh Waberi Kamil", 7006}, // padding does not hide a listed name of three words
		{"Mohamed", 0},    // a common word alone never hits a listed name of two or more
		{"Maduro", 22790}, // a long surname on few entries does (surname_only; see TestExplanations)
		{"Hernandez", 0},  // an everyday surname does not
		{"Abebe Kebede Tesfaye", 0},
		{"Société Djiboutienne de Commerce", 0},
		{"Banco Nacional de Panama", 0},
	}
	for _, tt := range tests {
		r := l.Screen(tt.name, Options{})
		switch {
		case tt.entry == 0 && r.Status != StatusClear:
			t.Errorf("Screen(%q) = %+v, want clear", tt.name, r)
		case tt.entry != 0 && !hasEntry(r, tt.entry):
			t.Errorf("Screen(%q) = %+v, want a hit on %d", tt.name, r, tt.entry)
		}
	}
}

func hasEntry(r Result, id int) bool {
	if r.Status != StatusHit {
		return false
	}
	return slices.ContainsFunc(r.Matches, func(m Match) bool { return m.EntryID == id })
}

func TestScreenThreshold(t *testing.T) {
	l := fixtureList(t)
	if r := l.Screen("Dmitry Khoroshev", Options{Threshold: 0.99}); r.Status != StatusClear {
		t.Errorf("at threshold 0.99: %+v, want clear", r)
	}
	if r := l.Screen("Dmitry Khoroshev", Options{Threshold: 0.5}); r.Status != StatusHit {
		t.Errorf("at threshold 0.5: %+v, want hit", r)
	}
}

func TestScreenBestFewSorted(t *testing.T) {
	l := fullList(t)
	r := l.Screen("Mohammed Ali Hassan", Options{Threshold: 0.6})
	if len(r.Matches) != MaxMatches {
		t.Fatalf("%d matches, want %d", len(r.Matches), MaxMatches)
	}
	seen := map[int]bool{}
	for i, m := range r.Matches {
		if i > 0 && m.Score > r.Matches[i-1].Score {
			t.Errorf("matches not sorted by score: %+v", r.Matches)
		}
		if seen[m.EntryID] {
			t.Errorf("entry %d listed twice", m.EntryID)
		}
		seen[m.EntryID] = true
	}
}

func TestScreenResultIsACopy(t *testing.T) {
	l := fixtureList(t)
	r := l.Screen("Iris Makran", Options{})
	r.Matches[0].Programs[0] = "CHANGED"
	if e, _ := l.Entry(40716); e.Programs[0] != "IRAN" {
		t.Errorf("changing a result changed the list: %v", e.Programs)
	}
}

func TestScreenNilList(t *testing.T) {
	var l *List
	if r := l.Screen("Dmitry Khoroshev", Options{}); r.Status != StatusNotScreened {
		t.Errorf("nil list: %+v, want not_screened", r)
	}
}

func FuzzScreen(f *testing.F) {
	for _, s := range []string{"Dmitry Khoroshev", "AL-", "ABU", "a b c d e f g h i j k l m n o p q r s t u v w x y z", "محمد", "\x00\xff",
		"D-a-v-i-d M_i_l_l_e_r", "U.S.A.B.C", "박영식", "ניקולס סצ׳", "々々高山々", "N. M. Moros", "maduro"} {
		f.Add(s)
	}
	l, err := Load(context.Background(), fixturePath(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		r := l.Screen(name, Options{})
		if len(r.Matches) > MaxMatches {
			t.Fatalf("%d matches", len(r.Matches))
		}
		for _, m := range r.Matches {
			if m.Score < DefaultThreshold || m.Score > 1.0000001 {
				t.Fatalf("score %v", m.Score)
			}
		}
	})
}

func TestWordCacheKeepsResults(t *testing.T) {
	l := fullList(t) // tests do not run in parallel, so emptying its cache disturbs no other test
	for i, r := range readLabelled(t) {
		if i%3 != 0 {
			continue // a third of the names is enough, and keeps the test quick under -race
		}
		l.words.reset()
		want := l.Screen(r.name, Options{}) // every word searched
		got := l.Screen(r.name, Options{})  // every word from the cache
		if got.Status != want.Status || len(got.Matches) != len(want.Matches) {
			t.Fatalf("%q: cached %+v, uncached %+v", r.name, got, want)
		}
		for i := range got.Matches {
			if got.Matches[i].EntryID != want.Matches[i].EntryID || got.Matches[i].Score != want.Matches[i].Score {
				t.Fatalf("%q: cached %+v, uncached %+v", r.name, got, want)
			}
		}
	}
}

func TestResultJSON(t *testing.T) {
	l := fixtureList(t)
	for name, want := range map[string]string{
		"Jean Dupont": `{"status":"clear","matches":[]}`,
		"":            `{"status":"not_screened","matches":[]}`,
		"Iris Makran": `{"status":"hit","matches":[{"entry_id":40716,"list":"ofac_sdn","list_name":"IRIS MAKRAN","matched_name":"IRIS MAKRAN","is_alias":false,"type":"vessel","programs":["IRAN"],"score":1}]}`,
	} {
		got, err := json.Marshal(l.Screen(name, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%q: %s\nwant %s", name, got, want)
		}
	}
}

// TestExplanations: a match that rests on a variation says which in
// Match.Explanation: given names as initials, extra names, one distinctive
// surname, letters spelled out; a word-for-word match says nothing.
func TestExplanations(t *testing.T) {
	l := evalList(t)
	tests := []struct {
		name  string
		entry int
		want  []string
	}{
		{"Nicolas Maduro Moros", 22790, nil},
		{"N. Maduro Moros", 22790, []string{ExplainInitials}},
		{"J. L. Rizo Moreno", 4424, []string{ExplainInitials}},
		{"Igor Ivanovich Petrovich Sechin", 16692, []string{ExplainExtraNames}},
		{"maduro", 22790, []string{ExplainSurnameOnly}},
		{"N-i-c-o-l-a-s M-a-d-u-r-o", 22790, []string{ExplainSpelledOut}},
	}
	for _, tt := range tests {
		r := l.Screen(tt.name, Options{})
		var m *Match
		for i := range r.Matches {
			if r.Matches[i].EntryID == tt.entry {
				m = &r.Matches[i]
			}
		}
		if m == nil {
			t.Errorf("Screen(%q) = %+v, want a hit on %d", tt.name, r, tt.entry)
			continue
		}
		if !slices.Equal(m.Explanation, tt.want) {
			t.Errorf("Screen(%q): explanation %v, want %v", tt.name, m.Explanation, tt.want)
		}
	}
	// One-word and initial near misses stay clear.
	for _, n := range []string{"Hernandez", "Smith", "M. Hernandez", "A. Mohamed", "Moreno"} {
		if r := l.Screen(n, Options{}); r.Status != StatusClear {
			t.Errorf("Screen(%q) = %+v, want clear", n, r)
		}
	}
}

// TestScreenBoundsLongNames: Screen reads at most MaxNameBytes of a name,
// whatever its caller accepted, so one name costs bounded work: a run of
// 100,000 hyphens took seconds (each hyphen looked along the whole run for
// the next letter) and now takes well under a second even on a busy
// machine. A listed name at the start of an over-long name still hits.
func TestScreenBoundsLongNames(t *testing.T) {
	l := evalList(t)
	for _, name := range []string{
		"a" + strings.Repeat("-", 100_000) + "b",
		strings.Repeat("\u0301", 100_000),
		strings.Repeat("박영식 ", 30_000),
	} {
		start := time.Now()
		l.Screen(name, Options{})
		if d := time.Since(start); d > time.Second {
			t.Errorf("Screen(%.20q... of %d bytes) took %v", name, len(name), d)
		}
	}
	long := "Nicolas Maduro Moros " + strings.Repeat("x", 2*MaxNameBytes)
	if r := l.Screen(long, Options{}); r.Status != StatusHit || r.Matches[0].EntryID != 22790 {
		t.Errorf("Screen(listed name + %d bytes) = %+v, want a hit on 22790", 2*MaxNameBytes, r)
	}
	// The cut falls on a rune boundary.
	if got := boundedName(strings.Repeat("a", MaxNameBytes-1) + "é"); got != strings.Repeat("a", MaxNameBytes-1) {
		t.Errorf("boundedName cut inside a rune: %q", got[len(got)-2:])
	}
}
