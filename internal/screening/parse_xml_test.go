package screening

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

func readSample(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(testutil.TestData(t, append([]string{"sanctions"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDetectFormat(t *testing.T) {
	cases := map[string]string{
		"ofac":        string(readSample(t, "ofac_fixture_small", "sdn.csv")),
		"un":          string(readSample(t, "un_sample", "consolidated.xml")),
		"eu":          string(readSample(t, "eu_sample", "eu_fsf.xml")),
		"eu no ns":    `<export><sanctionEntity/></export>`,
		"other xml":   `<?xml version="1.0"?><sdnList/>`,
		"eu other ns": `<export xmlns="urn:other"/>`,
		"bom and ws":  "\xef\xbb\xbf \n<CONSOLIDATED_LIST/>",
		"broken xml":  `<`,
	}
	want := map[string]string{"ofac": ListOFAC, "un": ListUN, "eu": ListEU, "eu no ns": ListEU,
		"other xml": "", "eu other ns": "", "bom and ws": ListUN, "broken xml": ""}
	for name, in := range cases {
		if got := detectFormat([]byte(in)); got != want[name] {
			t.Errorf("%s: %q, want %q", name, got, want[name])
		}
	}
}

func TestParseUN(t *testing.T) {
	entries, err := parseUN(readSample(t, "un_sample", "consolidated.xml"), "consolidated.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	pak, sechin, ohtc := entries[0], entries[1], entries[2]
	if pak.ID != 9100001 || pak.List != ListUN || pak.Reference != "KPi.901" || pak.Name != "PAK YONG SIK" ||
		pak.Type != TypeIndividual || len(pak.Programs) != 1 || pak.Programs[0] != "DPRK" || len(pak.Aliases) != 0 || pak.Title != "Official" {
		t.Errorf("PAK: %+v (the empty placeholder alias must be skipped)", pak)
	}
	wantAliases := []Alias{{1, "original_script", "Игорь Иванович Сечин", ""}, {2, "aka", "Igor Setchine", ""}, {3, "weak aka", "Sechin", ""}}
	if sechin.Name != "IGOR IVANOVICH SECHIN" || len(sechin.Aliases) != 3 {
		t.Fatalf("SECHIN: %+v", sechin)
	}
	for i, a := range wantAliases {
		if sechin.Aliases[i] != a {
			t.Errorf("alias %d: %+v, want %+v", i, sechin.Aliases[i], a)
		}
	}
	if ohtc.Type != TypeEntity || ohtc.Name != "OCEAN HARBOUR TRADING COMPANY" || len(ohtc.Aliases) != 2 || ohtc.Aliases[1].Kind != "fka" {
		t.Errorf("entity: %+v", ohtc)
	}
}

func TestParseEU(t *testing.T) {
	entries, err := parseEU(readSample(t, "eu_sample", "eu_fsf.xml"), "eu_fsf.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	maduro, takayama, star := entries[0], entries[1], entries[2]
	if maduro.ID != 910001 || maduro.List != ListEU || maduro.Reference != "EU.9001.01" || maduro.Name != "MADURO MOROS, Nicolas" ||
		maduro.Type != TypeIndividual || len(maduro.Programs) != 1 || maduro.Programs[0] != "VEN" ||
		len(maduro.Aliases) != 1 || maduro.Aliases[0] != (Alias{ID: 1, Kind: "weak aka", Name: "Nicolás Maduro"}) {
		t.Errorf("MADURO: %+v", maduro)
	}
	if takayama.Name != "TAKAYAMA, Kiyoshi" || takayama.Title != "Adviser" {
		t.Errorf("TAKAYAMA: %+v", takayama)
	}
	if star.Type != TypeEntity || star.Name != "NORTHERN STAR ENGINEERING JSC" || len(star.Aliases) != 1 || star.Aliases[0].Kind != "aka" {
		t.Errorf("entity: %+v", star)
	}
}

// TestParseXMLRefusesBadFiles: a bad UN or EU file is refused with an error
// naming the file, the line and the entry.
func TestParseXMLRefusesBadFiles(t *testing.T) {
	un := string(readSample(t, "un_sample", "consolidated.xml"))
	eu := string(readSample(t, "eu_sample", "eu_fsf.xml"))
	cases := []struct {
		name, file, body string
		parse            func([]byte, string) ([]Entry, error)
		sentinel         error
		message          string
	}{
		{"UN no DATAID", "un.xml", strings.Replace(un, "<DATAID>9100002</DATAID>", "", 1), parseUN, ErrMalformed, "INDIVIDUAL 2: DATAID"},
		{"UN duplicate DATAID", "un.xml", strings.Replace(un, "<DATAID>9100002</DATAID>", "<DATAID>9100001</DATAID>", 1), parseUN, ErrMalformed, "INDIVIDUAL 2 (DATAID 9100001): DATAID already used by record 1"},
		{"UN no name", "un.xml", strings.Replace(un, "<FIRST_NAME>OCEAN HARBOUR TRADING COMPANY</FIRST_NAME>", "", 1), parseUN, ErrMalformed, "ENTITY 3 (DATAID 9200001): FIRST_NAME..FOURTH_NAME is empty"},
		{"UN long alias", "un.xml", strings.Replace(un, "Igor Setchine", strings.Repeat("x", MaxNameBytes+1), 1), parseUN, ErrTooLarge, "INDIVIDUAL 2 (DATAID 9100002): ALIAS_NAME has"},
		{"UN not well-formed", "un.xml", strings.Replace(un, "</ENTITIES>", "", 1), parseUN, ErrMalformed, "un.xml line"},
		{"UN doctype", "un.xml", strings.Replace(un, "<CONSOLIDATED_LIST ", "<!DOCTYPE x><CONSOLIDATED_LIST ", 1), parseUN, ErrMalformed, "DOCTYPE"},
		{"UN empty", "un.xml", `<CONSOLIDATED_LIST><INDIVIDUALS/><ENTITIES/></CONSOLIDATED_LIST>`, parseUN, ErrEmptyList, "un.xml"},
		{"UN other encoding", "un.xml", strings.Replace(un, `encoding="UTF-8"`, `encoding="ISO-8859-1"`, 1), parseUN, ErrMalformed, "ISO-8859-1"},
		{"EU no logicalId", "eu.xml", strings.Replace(eu, `logicalId="910002"`, "", 1), parseEU, ErrMalformed, "sanctionEntity 2: logicalId"},
		{"EU duplicate logicalId", "eu.xml", strings.Replace(eu, `logicalId="910003"`, `logicalId="910001"`, 1), parseEU, ErrMalformed, "sanctionEntity 3 (logicalId 910001): logicalId already used by entity 1"},
		{"EU no name", "eu.xml", strings.Replace(eu, `wholeName="Kiyoshi TAKAYAMA"`, "", 1), parseEU, nil, ""},
		{"EU no nameAlias", "eu.xml", strings.Replace(strings.Replace(eu, `<nameAlias firstName="" middleName="" lastName="" wholeName="NORTHERN STAR ENGINEERING JSC" function="" gender="" title="" nameLanguage="" strong="true" regulationLanguage="en" logicalId="910204"/>`, "", 1), `<nameAlias firstName="" middleName="" lastName="" wholeName="АО Северная звезда инжиниринг" function="" gender="" title="" nameLanguage="RU" strong="true" regulationLanguage="en" logicalId="910205"/>`, "", 1), parseEU, ErrMalformed, "sanctionEntity 3 (logicalId 910003): no nameAlias"},
		{"EU empty whole name", "eu.xml", strings.Replace(eu, `wholeName="NORTHERN STAR ENGINEERING JSC"`, `wholeName=" "`, 1), parseEU, ErrMalformed, "sanctionEntity 3 (logicalId 910003): nameAlias 1 wholeName is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.parse([]byte(c.body), c.file)
			if c.sentinel == nil { // the split name still names the person
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *LoadError
			if !errors.As(err, &le) || le.File != c.file || !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("error = %v, want a LoadError for %s wrapping %v containing %q", err, c.file, c.sentinel, c.message)
			}
		})
	}
}

// allLists is the comma-separated source of the three sample lists.
func allLists(t testing.TB) string {
	return strings.Join([]string{
		testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv"),
		testutil.TestData(t, "sanctions", "un_sample", "consolidated.xml"),
		testutil.TestData(t, "sanctions", "eu_sample", "eu_fsf.xml"),
	}, ",")
}

// TestLoadSeveralLists: PAYD_SANCTIONS_LIST names several files, each read in
// the format its content shows, and every hit names its list.
func TestLoadSeveralLists(t *testing.T) {
	l, err := Load(context.Background(), allLists(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Lists(); got[ListOFAC] != 17 || got[ListUN] != 3 || got[ListEU] != 3 || l.Size() != 23 {
		t.Fatalf("lists %v, size %d", got, l.Size())
	}
	if e, ok := l.EntryOf(ListUN, 9100001); !ok || e.Name != "PAK YONG SIK" {
		t.Fatalf("EntryOf(un_sc, 9100001) = %+v, %v", e, ok)
	}
	cases := []struct{ name, list, listed string }{
		{"Daniel Moreno", ListOFAC, "MORENO, Daniel"},
		{"Igor Sechin", ListUN, "IGOR IVANOVICH SECHIN"},
		{"Игорь Сечин", ListUN, "IGOR IVANOVICH SECHIN"},
		{"Ocean Harbour Trading Company", ListUN, "OCEAN HARBOUR TRADING COMPANY"},
		{"Nicolas Maduro Moros", ListEU, "MADURO MOROS, Nicolas"},
		{"Northern Star Engineering", ListEU, "NORTHERN STAR ENGINEERING JSC"},
		// the scripts, against UN and EU entries
		{"박영식", ListUN, "PAK YONG SIK"},
		{"高山清司", ListEU, "TAKAYAMA, Kiyoshi"},
		{"ניקולס מדורו", ListEU, "MADURO MOROS, Nicolas"},
	}
	for _, c := range cases {
		r := l.Screen(c.name, Options{})
		if r.Status != StatusHit || r.Matches[0].List != c.list || r.Matches[0].ListName != c.listed {
			t.Errorf("%s: %+v, want a hit on %s %q", c.name, r, c.list, c.listed)
		}
	}
	if r := l.Screen("Mary Taylor", Options{}); r.Status != StatusClear {
		t.Errorf("Mary Taylor: %+v", r)
	}
}

func TestLoadSeveralListsRefusals(t *testing.T) {
	ofac := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	un := testutil.TestData(t, "sanctions", "un_sample", "consolidated.xml")
	other := filepath.Join(t.TempDir(), "other.xml")
	if err := os.WriteFile(other, []byte(`<?xml version="1.0"?><sdnList/>`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, source, failing string
		sentinel              error
	}{
		{"same list twice", un + "," + ofac + "," + un, un, ErrDuplicateList},
		{"unknown XML", ofac + ", " + other, other, ErrUnknownFormat},
		{"missing file", ofac + "," + un + ".missing", un + ".missing", os.ErrNotExist},
		{"too many sources", strings.Repeat(ofac+",", MaxSources+1), strings.Repeat(ofac+",", MaxSources+1), ErrTooLarge},
		{"only commas", " , ,", " , ,", ErrNoSource},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(context.Background(), c.source)
			var le *LoadError
			if !errors.As(err, &le) || le.Source != c.failing || !errors.Is(err, c.sentinel) {
				t.Fatalf("error = %v, want a LoadError for %q wrapping %v", err, c.failing, c.sentinel)
			}
		})
	}
}

func TestMatchListOfStoredMatches(t *testing.T) {
	var m Match
	if err := m.UnmarshalJSON([]byte(`{"entry_id":1,"list_name":"X"}`)); err != nil || m.List != ListOFAC {
		t.Fatalf("a match stored before lists were named: %+v, %v", m, err)
	}
	if err := m.UnmarshalJSON([]byte(`{"entry_id":1,"list":"un_sc"}`)); err != nil || m.List != ListUN {
		t.Fatalf("%+v, %v", m, err)
	}
}

// FuzzParseUN and FuzzParseEU: the parsers never panic, answer only
// *LoadError, and what they accept has a name and its list on every entry.
func FuzzParseUN(f *testing.F) {
	f.Add(readSample(f, "un_sample", "consolidated.xml"))
	f.Add([]byte(`<CONSOLIDATED_LIST><INDIVIDUALS><INDIVIDUAL><DATAID>1</DATAID><FIRST_NAME>A</FIRST_NAME></INDIVIDUAL></INDIVIDUALS></CONSOLIDATED_LIST>`))
	f.Fuzz(func(t *testing.T, data []byte) { checkParsed(t, ListUN, data, parseUN) })
}

func FuzzParseEU(f *testing.F) {
	f.Add(readSample(f, "eu_sample", "eu_fsf.xml"))
	f.Add([]byte(`<export><sanctionEntity logicalId="1"><nameAlias wholeName="A"/></sanctionEntity></export>`))
	f.Fuzz(func(t *testing.T, data []byte) { checkParsed(t, ListEU, data, parseEU) })
}

func checkParsed(t *testing.T, list string, data []byte, parse func([]byte, string) ([]Entry, error)) {
	entries, err := parse(data, "fuzz.xml")
	if err != nil {
		var le *LoadError
		if !errors.As(err, &le) || le.File != "fuzz.xml" {
			t.Fatalf("error %T %v, want a *LoadError naming the file", err, err)
		}
		return
	}
	if len(entries) == 0 {
		t.Fatal("accepted a list without entries")
	}
	for _, e := range entries {
		if e.List != list || strings.TrimSpace(e.Name) == "" || e.ID <= 0 || len(e.Name) > MaxNameBytes {
			t.Fatalf("accepted an unusable entry %+v", e)
		}
	}
	newList(entries, 0).Screen(entries[0].Name, Options{})
}
