package payouts

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
)

// utf8BOM is the byte-order mark spreadsheet programs put before UTF-8 CSVs;
// it is not part of the header.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseItemsCSV reads a variant A CSV held in memory; see ReadItemsCSV.
func ParseItemsCSV(body []byte, livemode bool) (*BatchRequest, error) {
	return ReadItemsCSV(bytes.NewReader(body), livemode)
}

// ReadItemsCSV reads a variant A CSV (Content-Type: text/csv) as it streams
// in: a header row with exactly the eight columns of ItemsCSVHeader, then
// one item a row; external_ref becomes the payout's reference. Only the
// parsed rows are kept, never the file.
func ReadItemsCSV(r io.Reader, livemode bool) (*BatchRequest, error) {
	b := &BatchRequest{Variant: VariantItems}
	rows := &rowErrors{param: "file"}
	seen := map[string]bool{}
	err := readCSV(r, ItemsCSVHeader, rows, func(row int, rec []string) error {
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

// ParseRowsCSV reads a variant B CSV held in memory; see ReadRowsCSV.
func ParseRowsCSV(body []byte, currency, description string, livemode bool) (*BatchRequest, error) {
	return ReadRowsCSV(bytes.NewReader(body), currency, description, livemode)
}

// ReadRowsCSV reads a variant B CSV (the file part of a multipart upload)
// as it streams in: a header row with exactly the six columns of
// RowsCSVHeader, then one row a line; amounts are whole DJF. The currency
// and description are checked first.
func ReadRowsCSV(r io.Reader, currency, description string, livemode bool) (*BatchRequest, error) {
	if err := CheckRowsFields(currency, description); err != nil {
		return nil, err
	}
	b, err := readRowsCSV(r, livemode)
	if err != nil {
		return nil, err
	}
	b.Description = description
	return b, nil
}

// CheckRowsFields checks the fields that come with a variant B CSV: the
// currency (given, and DJF) and the description's length.
func CheckRowsFields(currency, description string) error {
	if currency == "" {
		return errs.Missing("currency")
	}
	if err := rowsCurrency(currency); err != nil {
		return err
	}
	return batchDescription(description, MaxBatchDescription)
}

// ReadRowsUpload reads the file part of a variant B upload whose currency
// and description fields may come after it: the rows are read in DJF (the
// only currency a batch of rows takes) and the caller passes the result to
// FinishRowsUpload once every field is read, so a bad field is reported
// before the rows' errors, as ReadRowsCSV does.
func ReadRowsUpload(r io.Reader, livemode bool) (*BatchRequest, error) {
	return readRowsCSV(r, livemode)
}

// FinishRowsUpload completes ReadRowsUpload's result (b, err) with the
// upload's fields.
func FinishRowsUpload(b *BatchRequest, err error, currency, description string) (*BatchRequest, error) {
	if ferr := CheckRowsFields(currency, description); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		return nil, err
	}
	b.Description = description
	return b, nil
}

func readRowsCSV(r io.Reader, livemode bool) (*BatchRequest, error) {
	const currency = "DJF"
	b := &BatchRequest{Variant: VariantRows, Currency: currency}
	rows := &rowErrors{param: "file"}
	seen := map[string]bool{}
	err := readCSV(r, RowsCSVHeader, rows, func(row int, rec []string) error {
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

// MaxCSVLineBytes bounds one physical line of an uploaded CSV: a payout row
// is a few hundred bytes, and a line is held whole while it is read.
const MaxCSVLineBytes = 64 << 10

// readCSV reads a CSV as it streams in: it checks the encoding and the
// header, then calls row for each data record (numbered from 1) with its
// cells trimmed. A record with the wrong number of cells is reported on its
// row and skipped; a quoting error ends the reading, reported on the row
// where it happened. Invalid UTF-8 or a line longer than MaxCSVLineBytes
// anywhere refuses the whole file, naming the line. An error returned by row
// stops the reading and is returned.
func readCSV(body io.Reader, header []string, rows *rowErrors, row func(n int, rec []string) error) error {
	src := &csvSource{r: body}
	br := bufio.NewReaderSize(src, 4096)
	if bom, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(bom, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	r := csv.NewReader(br)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	want := strings.Join(header, ",")
	got, err := r.Read()
	if src.err != nil {
		return src.err
	}
	if err == io.EOF {
		return errs.Invalid("file", "csv_invalid_header", "the CSV is empty; its first line must be the header %s", want)
	}
	if err != nil || !sameHeader(got, header) {
		return errs.Invalid("file", "csv_invalid_header", "the first line must be exactly the header %s", want)
	}
	n := 0
	for {
		rec, err := r.Read()
		if src.err != nil {
			return src.err // refuses the whole file, whatever rows came before
		}
		if err == io.EOF {
			return nil
		}
		n++
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			rows.add(n, "file", "the row cannot be read as CSV (line %d, column %d): %v", pe.Line, pe.Column, pe.Err)
			return src.drain()
		}
		if err != nil {
			rows.add(n, "file", "the row cannot be read as CSV: %v", err)
			return src.drain()
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

// csvSource passes an upload through, checking as it goes that it is valid
// UTF-8 and that no line is longer than MaxCSVLineBytes. It holds at most the
// few bytes of a character split between two reads; the first fault is kept
// in err (as a 400 naming the line) and ends the stream.
type csvSource struct {
	r       io.Reader
	err     error
	carry   [utf8.UTFMax]byte // the start of a character cut by the last read
	ncarry  int
	carryAt int64 // its offset
	offset  int64 // bytes checked before this read
	line    int   // current line, from 1
	lineLen int
}

func (s *csvSource) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.line == 0 {
		s.line = 1
	}
	n, err := s.r.Read(p)
	if err2 := s.check(p[:n], err == io.EOF); err2 != nil {
		s.err = err2
		return 0, err2
	}
	if err != nil && err != io.EOF {
		s.err = uploadReadError(err)
		return n, s.err
	}
	return n, err
}

// check validates b, the next bytes of the stream (final at the end).
func (s *csvSource) check(b []byte, final bool) error {
	i := 0
	// Finish a character cut by the previous read.
	for s.ncarry > 0 && i < len(b) {
		s.carry[s.ncarry] = b[i]
		s.ncarry++
		i++
		if utf8.FullRune(s.carry[:s.ncarry]) {
			if r, _ := utf8.DecodeRune(s.carry[:s.ncarry]); r == utf8.RuneError {
				return s.invalid(s.carryAt)
			}
			s.lineLen += s.ncarry
			s.ncarry = 0
		}
	}
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == '\n' {
				s.line++
				s.lineLen = 0
			} else if s.lineLen++; s.lineLen > MaxCSVLineBytes {
				return errs.Invalid("file", "csv_line_too_long", "line %d of the CSV is longer than %d bytes", s.line, MaxCSVLineBytes)
			}
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			s.ncarry = copy(s.carry[:], b[i:])
			s.carryAt = s.offset + int64(i)
			i = len(b)
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return s.invalid(s.offset + int64(i))
		}
		s.lineLen += size
		i += size
	}
	s.offset += int64(len(b))
	if s.lineLen > MaxCSVLineBytes {
		return errs.Invalid("file", "csv_line_too_long", "line %d of the CSV is longer than %d bytes", s.line, MaxCSVLineBytes)
	}
	if final && s.ncarry > 0 {
		return s.invalid(s.carryAt)
	}
	return nil
}

func (s *csvSource) invalid(off int64) error {
	return errs.Invalid("file", "csv_invalid_encoding", "the CSV is not valid UTF-8: the first invalid byte is on line %d (byte offset %d)", s.line, off)
}

// drain reads the rest of the stream after a quoting error, so that invalid
// UTF-8 or an over-long line later in the file is still reported as the
// file's fault, and an upload over the size limit as too large.
func (s *csvSource) drain() error {
	var buf [4096]byte
	for s.err == nil {
		if _, err := s.Read(buf[:]); err != nil {
			break
		}
	}
	return s.err
}

// uploadReadError maps a failure to read the upload itself: over the size
// limit, 413; otherwise the body could not be read.
func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, ErrUploadTooLarge) {
		return &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Param: "file",
			Message: fmt.Sprintf("the upload is larger than %d bytes", MaxBatchBytes)}
	}
	return &errs.Error{Kind: errs.KindInvalid, Code: "body_unreadable", Param: "file", Message: "the upload could not be read", Err: err}
}

// ErrUploadTooLarge is what a reader limiting an upload returns past its
// limit (see LimitUpload).
var ErrUploadTooLarge = errors.New("payouts: upload larger than the limit")

// LimitUpload reads at most n bytes of r and then fails with
// ErrUploadTooLarge instead of stopping silently.
func LimitUpload(r io.Reader, n int64) io.Reader { return &uploadLimit{r: r, left: n} }

type uploadLimit struct {
	r    io.Reader
	left int64
}

func (l *uploadLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrUploadTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, ErrUploadTooLarge
	}
	return n, err
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
