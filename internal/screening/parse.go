package screening

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Size limits of a list. The 2021 SDN list is about 2 MB with 9,000 entries
// and 12,000 aliases; the limits leave room for growth while refusing a file
// that is clearly not a sanctions list.
const (
	MaxFileBytes  = 64 << 20 // largest sdn.csv or alt.csv accepted
	MaxEntries    = 500_000  // most records accepted in sdn.csv or alt.csv
	MaxNameBytes  = 1024     // longest primary name or alias accepted
	maxFieldBytes = 64 << 10 // longest other field (remarks) accepted
)

// Column counts of the OFAC legacy CSV files.
const (
	sdnFields = 12 // ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks
	altFields = 5  // ent_num, alt_num, alt_type, alt_name, alt_remarks
)

// File names of the two parts of a list.
const (
	sdnFile = "sdn.csv"
	altFile = "alt.csv"
)

// Parse reads a list from an sdn.csv reader and an optional alt.csv reader
// (nil when there are no aliases) and builds its index. Each reader is read up
// to MaxFileBytes.
func Parse(sdn, alt io.Reader) (*List, error) {
	sdnData, err := readLimited(sdn, sdnFile)
	if err != nil {
		return nil, err
	}
	var altData []byte
	if alt != nil {
		if altData, err = readLimited(alt, altFile); err != nil {
			return nil, err
		}
	}
	return buildList(sdnData, altData)
}

// buildList parses both files and indexes the result. altData is nil when
// there is no alt.csv.
func buildList(sdnData, altData []byte) (*List, error) {
	entries, err := parseSDN(sdnData)
	if err != nil {
		return nil, err
	}
	orphans := 0
	if altData != nil {
		if orphans, err = parseAlt(altData, entries); err != nil {
			return nil, err
		}
	}
	return newList(entries, orphans), nil
}

// readLimited reads r to the end, failing with ErrTooLarge past MaxFileBytes.
func readLimited(r io.Reader, file string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, &LoadError{File: file, Err: err}
	}
	if len(data) > MaxFileBytes {
		return nil, &LoadError{File: file, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxFileBytes)}
	}
	return data, nil
}

// csvRecords calls fn for every record of an OFAC legacy CSV file with the
// record's line number. The files are CRLF-terminated, end with a DOS
// end-of-file byte (0x1A) and are ASCII or Windows-1252; a file that is valid
// UTF-8 is taken as UTF-8.
func csvRecords(data []byte, file string, fn func(line int, rec []string) error) error {
	data = bytes.TrimRight(data, "\x1a\r\n\t ")
	if !utf8.Valid(data) {
		decoded, err := charmap.Windows1252.NewDecoder().Bytes(data)
		if err != nil {
			return &LoadError{File: file, Err: fmt.Errorf("%w: not UTF-8 nor Windows-1252: %v", ErrMalformed, err)}
		}
		data = decoded
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // counted below to name the line in the error
	r.ReuseRecord = true
	for n := 0; ; n++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &LoadError{File: file, Line: pe.Line, Err: fmt.Errorf("%w: %v", ErrMalformed, pe.Err)}
			}
			return &LoadError{File: file, Err: err}
		}
		line, _ := r.FieldPos(0)
		if n >= MaxEntries {
			return &LoadError{File: file, Line: line, Err: fmt.Errorf("%w: more than %d records", ErrTooLarge, MaxEntries)}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if err := fn(line, rec); err != nil {
			return &LoadError{File: file, Line: line, Err: err}
		}
	}
}

// parseSDN parses sdn.csv into entries in file order.
func parseSDN(data []byte) ([]Entry, error) {
	var entries []Entry
	seen := make(map[int]int) // ent_num -> line
	err := csvRecords(data, sdnFile, func(line int, rec []string) error {
		if len(rec) != sdnFields {
			return fmt.Errorf("%w: %d fields, want %d", ErrMalformed, len(rec), sdnFields)
		}
		for i, f := range rec {
			if len(f) > maxFieldBytes {
				return fmt.Errorf("%w: field %d has %d bytes, limit %d", ErrTooLarge, i+1, len(f), maxFieldBytes)
			}
		}
		id, err := parseID(rec[0], "ent_num")
		if err != nil {
			return err
		}
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("%w: ent_num %d already on line %d", ErrMalformed, id, prev)
		}
		seen[id] = line
		name, err := parseName(rec[1], "SDN_Name")
		if err != nil {
			return err
		}
		typ, err := parseEntryType(rec[2])
		if err != nil {
			return err
		}
		entries = append(entries, Entry{
			ID:          id,
			List:        ListOFAC,
			Name:        name,
			Type:        typ,
			Programs:    parsePrograms(rec[3]),
			Title:       field(rec[4]),
			CallSign:    field(rec[5]),
			VesselType:  field(rec[6]),
			Tonnage:     field(rec[7]),
			GRT:         field(rec[8]),
			VesselFlag:  field(rec[9]),
			VesselOwner: field(rec[10]),
			Remarks:     field(rec[11]),
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &LoadError{File: sdnFile, Err: ErrEmptyList}
	}
	return entries, nil
}

// parseAlt adds the aliases of alt.csv to entries. An alias whose ent_num is
// not in sdn.csv is skipped and counted: OFAC's own files never have one, but
// extracts (such as test fixtures) do, and one stray alias is no reason to
// refuse a whole list.
func parseAlt(data []byte, entries []Entry) (orphans int, err error) {
	byID := make(map[int]int, len(entries))
	for i := range entries {
		byID[entries[i].ID] = i
	}
	err = csvRecords(data, altFile, func(line int, rec []string) error {
		if len(rec) != altFields {
			return fmt.Errorf("%w: %d fields, want %d", ErrMalformed, len(rec), altFields)
		}
		for i, f := range rec {
			if len(f) > maxFieldBytes {
				return fmt.Errorf("%w: field %d has %d bytes, limit %d", ErrTooLarge, i+1, len(f), maxFieldBytes)
			}
		}
		entID, err := parseID(rec[0], "ent_num")
		if err != nil {
			return err
		}
		altID, err := parseID(rec[1], "alt_num")
		if err != nil {
			return err
		}
		name, err := parseName(rec[3], "alt_name")
		if err != nil {
			return err
		}
		i, ok := byID[entID]
		if !ok {
			orphans++
			return nil
		}
		entries[i].Aliases = append(entries[i].Aliases, Alias{
			ID:      altID,
			Kind:    strings.ToLower(field(rec[2])),
			Name:    name,
			Remarks: field(rec[4]),
		})
		return nil
	})
	return orphans, err
}

// field trims a CSV field and maps OFAC's empty marker "-0-" to "".
func field(s string) string {
	s = strings.TrimSpace(s)
	if s == "-0-" {
		return ""
	}
	return s
}

// parseID parses a positive integer identifier column.
func parseID(s, column string) (int, error) {
	v := field(s)
	id, err := strconv.Atoi(v)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%w: %s %q is not a positive integer", ErrMalformed, column, v)
	}
	return id, nil
}

// parseName checks a name column: present and at most MaxNameBytes.
func parseName(s, column string) (string, error) {
	name := field(s)
	switch {
	case name == "":
		return "", fmt.Errorf("%w: %s is empty", ErrMalformed, column)
	case len(name) > MaxNameBytes:
		return "", fmt.Errorf("%w: %s has %d bytes, limit %d", ErrTooLarge, column, len(name), MaxNameBytes)
	}
	return name, nil
}

// parseEntryType maps the SDN_Type column; blank means an entity.
func parseEntryType(s string) (string, error) {
	switch t := strings.ToLower(field(s)); t {
	case "":
		return TypeEntity, nil
	case TypeIndividual, TypeVessel, TypeAircraft:
		return t, nil
	default:
		return "", fmt.Errorf("%w: SDN_Type %q is not individual, vessel, aircraft or blank", ErrMalformed, t)
	}
}

// parsePrograms splits the Program column. Several programs are written
// "SDGT] [IFSR", the outer brackets being implied.
func parsePrograms(s string) []string {
	var programs []string
	for _, p := range strings.FieldsFunc(field(s), func(r rune) bool { return r == '[' || r == ']' }) {
		if p = strings.TrimSpace(p); p != "" {
			programs = append(programs, p)
		}
	}
	return programs
}
