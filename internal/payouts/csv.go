package payouts

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
)

// utf8BOM is the byte-order mark spreadsheet programs put before UTF-8 CSVs;
// it is not part of the header.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseItemsCSV reads a variant A CSV (Content-Type: text/csv): a header row
// with exactly the eight columns of ItemsCSVHeader, then one item a row;
// external_ref becomes the payout's reference.
func ParseItemsCSV(body []byte, livemode bool) (*BatchRequest, error) {
	b := &BatchRequest{Variant: VariantItems}
	rows := &rowErrors{param: "file"}
	seen := map[string]bool{}
	err := readCSV(body, ItemsCSVHeader, rows, func(row int, rec []string) error {
		in := &payoutInput{Row: row, Currency: rec[1], Provider: rec[2], MSISDN: rec[3], Account: rec[4],
			Name: rec[5], Description: rec[6], Reference: rec[7]}
		csvAmount(in, rec[0], false)
		if !b.keep(in, seen) {
			return nil
		}
		if len(b.inputs) > MaxBatchRows {
			return tooManyRows("file")
		}
		if len(in.errors) == 0 {
			in.validate(shapeItems, livemode, "")
		}
		rows.addInput(in)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.finish(rows)
}

// ParseRowsCSV reads a variant B CSV (the file part of a multipart upload):
// a header row with exactly the six columns of RowsCSVHeader, then one row
// a line; amounts are whole DJF.
func ParseRowsCSV(body []byte, currency, description string, livemode bool) (*BatchRequest, error) {
	if currency == "" {
		return nil, errs.Missing("currency")
	}
	if err := rowsCurrency(currency); err != nil {
		return nil, err
	}
	if err := batchDescription(description, MaxBatchDescription); err != nil {
		return nil, err
	}
	b := &BatchRequest{Variant: VariantRows, Currency: currency, Description: description}
	rows := &rowErrors{param: "file"}
	seen := map[string]bool{}
	err := readCSV(body, RowsCSVHeader, rows, func(row int, rec []string) error {
		in := &payoutInput{Row: row, Currency: currency, MSISDN: rec[0], Account: rec[1], Provider: rec[3],
			Reference: rec[4], Description: rec[5]}
		csvAmount(in, rec[2], true)
		if !b.keep(in, seen) {
			return nil
		}
		if len(b.inputs) > MaxBatchRows {
			return tooManyRows("file")
		}
		if len(in.errors) == 0 {
			in.validate(shapeRows, livemode, "")
		}
		rows.addInput(in)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.finish(rows)
}

// csvAmount reads an amount cell: digits only (whole DJF for variant B).
func csvAmount(in *payoutInput, cell string, wholeDJF bool) {
	cell = strings.TrimSpace(cell)
	if cell == "" {
		return
	}
	for _, c := range cell {
		if c < '0' || c > '9' {
			if wholeDJF {
				in.fail("amount", "amount_invalid", "amount must be a whole number of DJF, digits only")
			} else {
				in.fail("amount", "amount_invalid", "amount must be an integer in minor units, digits only")
			}
			return
		}
	}
	v, err := strconv.ParseInt(cell, 10, 64)
	if err != nil {
		in.fail("amount", "amount_invalid", "amount is too large")
		return
	}
	in.Amount, in.AmountSet = v, true
}

// readCSV checks the encoding and the header, then calls row for each data
// record (numbered from 1) with its cells trimmed. A record with the wrong
// number of cells is reported on its row and skipped; a quoting error ends
// the reading, reported on the row where it happened. An error returned by
// row stops the reading and is returned.
func readCSV(body []byte, header []string, rows *rowErrors, row func(n int, rec []string) error) error {
	if !utf8.Valid(body) {
		off := invalidUTF8Offset(body)
		line := bytes.Count(body[:off], []byte{'\n'}) + 1
		return errs.Invalid("file", "csv_invalid_encoding", "the CSV is not valid UTF-8: the first invalid byte is on line %d (byte offset %d)", line, off)
	}
	body = bytes.TrimPrefix(body, utf8BOM)
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	want := strings.Join(header, ",")
	got, err := r.Read()
	if err == io.EOF {
		return errs.Invalid("file", "csv_invalid_header", "the CSV is empty; its first line must be the header %s", want)
	}
	if err != nil || !sameHeader(got, header) {
		return errs.Invalid("file", "csv_invalid_header", "the first line must be exactly the header %s", want)
	}
	n := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		n++
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			rows.add(n, "file", "the row cannot be read as CSV (line %d, column %d): %v", pe.Line, pe.Column, pe.Err)
			return nil
		}
		if err != nil {
			rows.add(n, "file", "the row cannot be read as CSV: %v", err)
			return nil
		}
		if len(rec) != len(header) {
			rows.add(n, "file", "the row has %d columns; %d are expected (%s)", len(rec), len(header), want)
			continue
		}
		cells := make([]string, len(rec))
		for i, c := range rec {
			cells[i] = strings.TrimSpace(c)
		}
		if err := row(n, cells); err != nil {
			return err
		}
	}
}

// sameHeader compares a header record with the expected columns exactly
// (surrounding spaces aside).
func sameHeader(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if strings.TrimSpace(got[i]) != want[i] {
			return false
		}
	}
	return true
}

// invalidUTF8Offset returns the offset of the first byte that is not part of
// a valid UTF-8 sequence.
func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}
