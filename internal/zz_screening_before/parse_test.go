package screening

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadFixture(t *testing.T) {
	l, err := Load(context.Background(), fixturePath(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Size(), 17; got != want {
		t.Errorf("Size() = %d, want %d", got, want)
	}
	if got, want := l.AliasCount(), 13; got != want {
		t.Errorf("AliasCount() = %d, want %d", got, want)
	}
	if got, want := l.OrphanAliases(), 5; got != want {
		t.Errorf("OrphanAliases() = %d, want %d (aliases of entries not in the extract)", got, want)
	}

	tests := []struct {
		id       int
		name     string
		typ      string
		programs []string
		aliases  int
	}{
		{10278, "LOGAN MOREY, Elvis Angus", TypeIndividual, []string{"SDNT"}, 0},
		{11195, "IRAN AIRCRAFT MANUFACTURING INDUSTRIAL COMPANY", TypeEntity, []string{"NPWMD", "IFSR", "IRAN-CON-ARMS-EO"}, 4},
		{19709, "AIRCRAFT, AVIONICS, PARTS & SUPPORT LTD.", TypeEntity, []string{"SDGT", "IFSR"}, 1},
		{20540, "P-532", TypeAircraft, []string{"DPRK3"}, 0},
		{40716, "IRIS MAKRAN", TypeVessel, []string{"IRAN"}, 0},
		{48603, "KHOROSHEV, Dmitry Yuryevich", TypeIndividual, []string{"CYBER2"}, 3},
	}
	for _, tt := range tests {
		e, ok := l.Entry(tt.id)
		if !ok {
			t.Errorf("entry %d missing", tt.id)
			continue
		}
		if e.Name != tt.name || e.Type != tt.typ || !slices.Equal(e.Programs, tt.programs) || len(e.Aliases) != tt.aliases {
			t.Errorf("entry %d = %q %q %q %d aliases, want %q %q %q %d",
				tt.id, e.Name, e.Type, e.Programs, len(e.Aliases), tt.name, tt.typ, tt.programs, tt.aliases)
		}
	}

	vessel, _ := l.Entry(47371)
	if vessel.CallSign != "A8LU7" || vessel.VesselType != "Crude Oil Tanker" || vessel.VesselFlag != "Gabon" || vessel.Tonnage != "" {
		t.Errorf("vessel trailing fields = %+v", vessel)
	}
	person, _ := l.Entry(48603)
	if person.Aliases[0] != (Alias{ID: 75563, Kind: "aka", Name: "KHOROSHEV, Dmitriy Yurevich"}) {
		t.Errorf("first alias = %+v", person.Aliases[0])
	}
	if !strings.HasPrefix(person.Remarks, "DOB 17 Apr 1993;") {
		t.Errorf("remarks = %q", person.Remarks)
	}
}

func TestLoadFullList(t *testing.T) {
	l := fullList(t)
	if l.Size() != 8976 || l.AliasCount() != 11910 || l.OrphanAliases() != 0 {
		t.Errorf("full list: %d entries, %d aliases, %d orphans; want 8976, 11910, 0", l.Size(), l.AliasCount(), l.OrphanAliases())
	}
	last, ok := l.Entry(6365)
	if !ok || last.Name != "BIN LADIN, Usama bin Muhammad bin Awad" {
		t.Errorf("entry 6365 = %+v", last)
	}
}

func TestParseErrors(t *testing.T) {
	const good = `36,"AEROCARIBBEAN AIRLINES",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\r\n"
	tests := []struct {
		name     string
		sdn, alt string
		file     string
		line     int
		sentinel error
		message  string
	}{
		{"too few fields", good + `37,"X",-0- ,"CUBA"` + "\r\n", "", sdnFile, 2, ErrMalformed, "4 fields, want 12"},
		{"duplicate entry", good + good, "", sdnFile, 2, ErrMalformed, "already on line 1"},
		{"bad id", `abc,"X",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `, "", sdnFile, 1, ErrMalformed, "ent_num"},
		{"unknown type", `36,"X","submarine","CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `, "", sdnFile, 1, ErrMalformed, "submarine"},
		{"empty name", `36,-0- ,-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `, "", sdnFile, 1, ErrMalformed, "SDN_Name is empty"},
		{"long name", `36,"` + strings.Repeat("A", MaxNameBytes+1) + `",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `, "", sdnFile, 1, ErrTooLarge, "SDN_Name"},
		{"bare quote", good + `37,"X"Y",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `, "", sdnFile, 2, ErrMalformed, "quote"},
		{"empty list", "\x1a", "", sdnFile, 0, ErrEmptyList, "no entries"},
		{"alias fields", good, `36,12,"aka"` + "\r\n", altFile, 1, ErrMalformed, "3 fields, want 5"},
		{"alias name", good, `36,12,"aka",-0- ,-0- `, altFile, 1, ErrMalformed, "alt_name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var alt io.Reader
			if tt.alt != "" {
				alt = strings.NewReader(tt.alt)
			}
			_, err := Parse(strings.NewReader(tt.sdn), alt)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error = %v, want *LoadError", err)
			}
			if le.File != tt.file || le.Line != tt.line || !errors.Is(err, tt.sentinel) || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error = %v (file %q line %d), want %s line %d, %v, containing %q", err, le.File, le.Line, tt.file, tt.line, tt.sentinel, tt.message)
			}
		})
	}
}

func TestParseWindows1252(t *testing.T) {
	sdn := "36,\"SOCI\xc9T\xc9 G\xc9N\xc9RALE\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n\x1a"
	l, err := Parse(strings.NewReader(sdn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := l.Entry(36); e.Name != "SOCIÉTÉ GÉNÉRALE" {
		t.Errorf("name = %q, want SOCIÉTÉ GÉNÉRALE", e.Name)
	}
	if r := l.Screen("Societe Generale", Options{}); r.Status != StatusHit {
		t.Errorf("Screen = %+v, want a hit", r)
	}
}

func TestLoadFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sdn.csv")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, MaxFileBytes+1); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	_, err := Load(context.Background(), path)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, ErrTooLarge) || le.Source != path || le.File != sdnFile {
		t.Fatalf("error = %v, want a LoadError for %s wrapping ErrTooLarge", err, path)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nowhere", "sdn.csv")
	_, err := Load(context.Background(), path)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error = %v, want not-exist naming %s", err, path)
	}
}

func TestLoadErrorNamesSourceAndLine(t *testing.T) {
	dir := t.TempDir()
	sdn := filepath.Join(dir, "sdn.csv")
	content := `36,"AEROCARIBBEAN AIRLINES",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\r\n" + `37,"BROKEN"` + "\r\n"
	if err := os.WriteFile(sdn, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), dir) // a directory holding sdn.csv is accepted
	want := "screening: load " + dir + ": sdn.csv line 2: malformed record: 2 fields, want 12"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("36,\"AEROCARIBBEAN AIRLINES\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n\x1a", "36,12,\"aka\",\"AERO-CARIBBEAN\",-0- \r\n")
	f.Add("1,\"A, B\",\"individual\",\"X] [Y\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,\"r\"", "")
	f.Fuzz(func(t *testing.T, sdn, alt string) {
		l, err := Parse(strings.NewReader(sdn), strings.NewReader(alt))
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LoadError", err)
			}
			return
		}
		for _, e := range l.entries {
			l.Screen(e.Name, Options{})
		}
	})
}
