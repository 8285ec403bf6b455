package screening

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Lists payd reads, as named in Entry.List and Match.List.
const (
	// ListOFAC is OFAC's Specially Designated Nationals list (sdn.csv and
	// alt.csv, the legacy CSV format).
	ListOFAC = "ofac_sdn"
	// ListUN is the UN Security Council Consolidated List, in its published
	// XML (CONSOLIDATED_LIST).
	ListUN = "un_sc"
	// ListEU is the EU's consolidated list of persons, groups and entities
	// subject to financial sanctions (the Financial Sanctions Files, XML
	// version 1.1, root export).
	ListEU = "eu_fsf"
)

// maxAliasesPerEntry bounds the names one UN or EU record may carry; the
// published lists have at most a few dozen.
const maxAliasesPerEntry = 1000

// detectFormat names the list a file holds from its content: the root element
// of an XML file (CONSOLIDATED_LIST for the UN, export in the EU namespace),
// else OFAC's CSV. It returns "" for XML payd does not read.
func detectFormat(data []byte) string {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if !bytes.HasPrefix(trimmed, []byte("<")) {
		return ListOFAC
	}
	d := xml.NewDecoder(bytes.NewReader(trimmed))
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch {
			case se.Name.Local == "CONSOLIDATED_LIST":
				return ListUN
			case se.Name.Local == "export" && (se.Name.Space == euNamespace || se.Name.Space == ""):
				return ListEU
			}
			return ""
		}
	}
}

// euNamespace is the namespace of the EU Financial Sanctions Files XML.
const euNamespace = "http://eu.europa.ec/fpi/fsd/export"

// xmlRecords streams the records of a list file: it calls fn with a decoder
// positioned on each start element that isRecord accepts and the record's
// 1-based number among its kind. file names the file in errors.
func xmlRecords(data []byte, file string, isRecord func(xml.StartElement) bool, fn func(d *xml.Decoder, se xml.StartElement, n int) error) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = func(charset string, input io.Reader) (io.Reader, error) {
		return nil, fmt.Errorf("%w: encoding %q (want UTF-8)", ErrMalformed, charset)
	}
	n := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			line, _ := d.InputPos()
			return &LoadError{File: file, Line: line, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		}
		switch t := tok.(type) {
		case xml.Directive:
			line, _ := d.InputPos()
			return &LoadError{File: file, Line: line, Err: fmt.Errorf("%w: DOCTYPE or other declaration", ErrMalformed)}
		case xml.StartElement:
			if !isRecord(t) {
				continue
			}
			n++
			line, _ := d.InputPos()
			if n > MaxEntries {
				return &LoadError{File: file, Line: line, Err: fmt.Errorf("%w: more than %d records", ErrTooLarge, MaxEntries)}
			}
			if err := fn(d, t, n); err != nil {
				var le *LoadError
				if errors.As(err, &le) {
					return err
				}
				return &LoadError{File: file, Line: line, Err: err}
			}
		}
	}
}

// unRecord is one INDIVIDUAL or ENTITY of the UN Consolidated List, as far
// as payd reads it.
type unRecord struct {
	DataID         string    `xml:"DATAID"`
	FirstName      string    `xml:"FIRST_NAME"`
	SecondName     string    `xml:"SECOND_NAME"`
	ThirdName      string    `xml:"THIRD_NAME"`
	FourthName     string    `xml:"FOURTH_NAME"`
	ListType       string    `xml:"UN_LIST_TYPE"`
	Reference      string    `xml:"REFERENCE_NUMBER"`
	OriginalScript string    `xml:"NAME_ORIGINAL_SCRIPT"`
	Comments       string    `xml:"COMMENTS1"`
	Designation    []string  `xml:"DESIGNATION>VALUE"`
	Aliases        []unAlias `xml:"INDIVIDUAL_ALIAS"`
	EntityAliases  []unAlias `xml:"ENTITY_ALIAS"`
}

type unAlias struct {
	Quality string `xml:"QUALITY"`
	Name    string `xml:"ALIAS_NAME"`
}

// parseUN reads the UN Security Council Consolidated List
// (CONSOLIDATED_LIST / INDIVIDUALS / INDIVIDUAL and ENTITIES / ENTITY).
// An individual's name is FIRST_NAME to FOURTH_NAME in order; the name in
// its original script and every ALIAS_NAME become aliases.
func parseUN(data []byte, file string) ([]Entry, error) {
	var entries []Entry
	seen := make(map[int]int)
	isRecord := func(se xml.StartElement) bool {
		return se.Name.Local == "INDIVIDUAL" || se.Name.Local == "ENTITY"
	}
	err := xmlRecords(data, file, isRecord, func(d *xml.Decoder, se xml.StartElement, n int) error {
		var r unRecord
		if err := d.DecodeElement(&r, &se); err != nil {
			return fmt.Errorf("%w: %s %d: %v", ErrMalformed, se.Name.Local, n, err)
		}
		where := fmt.Sprintf("%s %d", se.Name.Local, n)
		id, err := parseID(r.DataID, where+": DATAID")
		if err != nil {
			return err
		}
		where = fmt.Sprintf("%s %d (DATAID %d)", se.Name.Local, n, id)
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("%w: %s: DATAID already used by record %d", ErrMalformed, where, prev)
		}
		seen[id] = n
		typ := TypeEntity
		if se.Name.Local == "INDIVIDUAL" {
			typ = TypeIndividual
		}
		name, err := parseName(joinNames(r.FirstName, r.SecondName, r.ThirdName, r.FourthName), where+": FIRST_NAME..FOURTH_NAME")
		if err != nil {
			return err
		}
		e := Entry{ID: id, List: ListUN, Reference: strings.TrimSpace(r.Reference), Name: name, Type: typ,
			Remarks: strings.TrimSpace(r.Comments)}
		if lt := strings.TrimSpace(r.ListType); lt != "" {
			e.Programs = []string{lt}
		}
		if len(r.Designation) > 0 {
			e.Title = strings.TrimSpace(r.Designation[0])
		}
		aliases := append(r.Aliases, r.EntityAliases...)
		if len(aliases) > maxAliasesPerEntry {
			return fmt.Errorf("%w: %s: %d aliases, limit %d", ErrTooLarge, where, len(aliases), maxAliasesPerEntry)
		}
		if s := strings.TrimSpace(r.OriginalScript); s != "" {
			if err := e.addAlias(s, "original_script", where+": NAME_ORIGINAL_SCRIPT"); err != nil {
				return err
			}
		}
		for _, a := range aliases {
			if strings.TrimSpace(a.Name) == "" {
				continue // the list writes empty placeholder aliases
			}
			if err := e.addAlias(a.Name, unAliasKind(a.Quality), where+": ALIAS_NAME"); err != nil {
				return err
			}
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &LoadError{File: file, Err: ErrEmptyList}
	}
	return entries, nil
}

// unAliasKind maps an alias QUALITY: "Good" and "a.k.a." are strong aliases
// (aka), "Low" ones weak (weak aka), "f.k.a." former names (fka).
func unAliasKind(quality string) string {
	switch strings.ToLower(strings.TrimSpace(quality)) {
	case "low":
		return "weak aka"
	case "f.k.a.", "fka":
		return "fka"
	default:
		return "aka"
	}
}

// euEntity is one sanctionEntity of the EU Financial Sanctions Files, as far
// as payd reads it.
type euEntity struct {
	LogicalID  string   `xml:"logicalId,attr"`
	Reference  string   `xml:"euReferenceNumber,attr"`
	Remark     []string `xml:"remark"`
	Regulation []struct {
		Programme string `xml:"programme,attr"`
	} `xml:"regulation"`
	SubjectType struct {
		Code string `xml:"code,attr"`
	} `xml:"subjectType"`
	Names []struct {
		First    string `xml:"firstName,attr"`
		Middle   string `xml:"middleName,attr"`
		Last     string `xml:"lastName,attr"`
		Whole    string `xml:"wholeName,attr"`
		Function string `xml:"function,attr"`
		Title    string `xml:"title,attr"`
		Strong   string `xml:"strong,attr"`
	} `xml:"nameAlias"`
}

// parseEU reads the EU Financial Sanctions Files XML (export /
// sanctionEntity / nameAlias). The first nameAlias is the entry's name, the
// others its aliases (strong="false" ones weak). A person's name is written
// "LASTNAME, First Middle" when the list splits it, as OFAC writes
// individuals; otherwise wholeName.
func parseEU(data []byte, file string) ([]Entry, error) {
	var entries []Entry
	seen := make(map[int]int)
	isRecord := func(se xml.StartElement) bool { return se.Name.Local == "sanctionEntity" }
	err := xmlRecords(data, file, isRecord, func(d *xml.Decoder, se xml.StartElement, n int) error {
		var r euEntity
		if err := d.DecodeElement(&r, &se); err != nil {
			return fmt.Errorf("%w: sanctionEntity %d: %v", ErrMalformed, n, err)
		}
		where := fmt.Sprintf("sanctionEntity %d", n)
		id, err := parseID(r.LogicalID, where+": logicalId")
		if err != nil {
			return err
		}
		where = fmt.Sprintf("sanctionEntity %d (logicalId %d)", n, id)
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("%w: %s: logicalId already used by entity %d", ErrMalformed, where, prev)
		}
		seen[id] = n
		if len(r.Names) == 0 {
			return fmt.Errorf("%w: %s: no nameAlias", ErrMalformed, where)
		}
		if len(r.Names) > maxAliasesPerEntry {
			return fmt.Errorf("%w: %s: %d nameAlias, limit %d", ErrTooLarge, where, len(r.Names), maxAliasesPerEntry)
		}
		typ := TypeEntity
		if strings.EqualFold(strings.TrimSpace(r.SubjectType.Code), "person") {
			typ = TypeIndividual
		}
		e := Entry{ID: id, List: ListEU, Reference: strings.TrimSpace(r.Reference), Type: typ,
			Remarks: strings.TrimSpace(strings.Join(r.Remark, "; "))}
		for _, reg := range r.Regulation {
			if p := strings.TrimSpace(reg.Programme); p != "" && !slices.Contains(e.Programs, p) {
				e.Programs = append(e.Programs, p)
			}
		}
		for i, na := range r.Names {
			text := strings.TrimSpace(na.Whole)
			if typ == TypeIndividual && strings.TrimSpace(na.Last) != "" {
				if given := joinNames(na.First, na.Middle); given != "" {
					text = strings.TrimSpace(na.Last) + ", " + given
				} else if text == "" {
					text = strings.TrimSpace(na.Last)
				}
			}
			if i == 0 {
				if e.Name, err = parseName(text, where+": nameAlias 1 wholeName"); err != nil {
					return err
				}
				e.Title = firstNonBlank(na.Title, na.Function)
				continue
			}
			if text == "" {
				continue
			}
			kind := "aka"
			if strings.EqualFold(strings.TrimSpace(na.Strong), "false") {
				kind = "weak aka"
			}
			if err := e.addAlias(text, kind, fmt.Sprintf("%s: nameAlias %d wholeName", where, i+1)); err != nil {
				return err
			}
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &LoadError{File: file, Err: ErrEmptyList}
	}
	return entries, nil
}

// addAlias checks and appends an alias, numbered within the entry.
func (e *Entry) addAlias(name, kind, where string) error {
	name, err := parseName(name, where)
	if err != nil {
		return err
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: %s is not UTF-8", ErrMalformed, where)
	}
	e.Aliases = append(e.Aliases, Alias{ID: len(e.Aliases) + 1, Kind: kind, Name: name})
	return nil
}

// joinNames joins the non-blank parts of a name with single spaces.
func joinNames(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

func firstNonBlank(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// entryKey identifies an entry across lists: each list numbers its own.
type entryKey struct {
	list string
	id   int
}
