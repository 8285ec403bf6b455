package screening

import (
	"strings"
	"testing"
)

// TestCommonWordsDiscounted checks the common-word weighting (common.go) on a
// list built here, so that it runs without the full list: a near miss on
// everyday names ("Mark Jackson" for "JAKSIC, Marko", which the full list
// flagged before the weighting) stays clear, while a match with an anchor, a
// rare listed word written as listed, still hits with a transliterated
// given name.
func TestCommonWordsDiscounted(t *testing.T) {
	sdn := `100,"JAKSIC, Marko","individual","SDGT",-0-,-0-,-0-,-0-,-0-,-0-,-0-,-0-
200,"MADURO MOROS, Nicolas","individual","VENEZUELA",-0-,-0-,-0-,-0-,-0-,-0-,-0-,-0-
`
	l, err := Parse(strings.NewReader(sdn), strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		entry int // 0: must be clear
	}{
		{"Mark Jackson", 0},
		{"Marko Jaksic", 100},
		{"Nikolas Maduro Moros", 200},
	} {
		r := l.Screen(tt.name, Options{})
		switch {
		case tt.entry == 0 && r.Status != StatusClear:
			t.Errorf("Screen(%q) = %+v, want clear: a near miss on everyday names", tt.name, r)
		case tt.entry != 0 && (r.Status != StatusHit || r.Matches[0].EntryID != tt.entry):
			t.Errorf("Screen(%q) = %+v, want a hit on %d", tt.name, r, tt.entry)
		}
	}
}
