package payouts

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/payd/payd/internal/errs"
)

// TestCSVStreamFaults: a CSV read as it streams is refused for invalid UTF-8
// or an over-long line wherever it is, naming the line and byte offset, and
// the answer is the same whether the upload arrives whole or a byte at a time
// (a character split between two reads is still one character).
func TestCSVStreamFaults(t *testing.T) {
	const header = "recipient_msisdn,recipient_account,amount,provider,reference,description\n"
	good := "+25377000001,,100,wallet_b,r1,caf\u00e9 \u4e16\u754c \U0001F600\n"
	cases := []struct {
		name, csv, code, message string
	}{
		{"invalid byte on line 3", header + good + "+25377000002,,100,wallet_b,r2,bad \xff\n", "csv_invalid_encoding", "line 3 (byte offset "},
		{"truncated character at the end", header + good + "+25377000002,,100,wallet_b,r2,cut \xe4\xb8", "csv_invalid_encoding", "line 3"},
		{"invalid byte in the header", "recipient_msisdn\xc3(,x\n", "csv_invalid_encoding", "line 1 (byte offset 16)"},
		{"over-long line", header + good + strings.Repeat("x", MaxCSVLineBytes+1) + "\n", "csv_line_too_long", "line 3 "},
		{"invalid byte after a quoting error", header + "\"a\"b,,1,wallet_b,r,\n" + good + "\xff\n", "csv_invalid_encoding", "line 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var msgs []string
			for _, wrap := range []string{"whole", "byte at a time"} {
				var r io.Reader = strings.NewReader(c.csv)
				if wrap != "whole" {
					r = iotest.OneByteReader(r)
				}
				_, err := ReadRowsCSV(r, "DJF", "", false)
				e := errs.As(err)
				if e == nil || e.Code != c.code || e.Param != "file" || !strings.Contains(e.Message, c.message) {
					t.Fatalf("%s: %v, want %s mentioning %q", wrap, err, c.code, c.message)
				}
				msgs = append(msgs, e.Message)
			}
			if msgs[0] != msgs[1] {
				t.Fatalf("whole %q, byte at a time %q", msgs[0], msgs[1])
			}
		})
	}
	// Valid multi-byte text split anywhere reads the same.
	for _, body := range []string{header + good, "\xef\xbb\xbf" + header + good} {
		whole, err := ReadRowsCSV(strings.NewReader(body), "DJF", "", false)
		if err != nil {
			t.Fatal(err)
		}
		bytewise, err := ReadRowsCSV(iotest.OneByteReader(strings.NewReader(body)), "DJF", "", false)
		if err != nil || whole.RowCount() != 1 || bytewise.RowCount() != 1 || whole.inputs[0].Description != bytewise.inputs[0].Description {
			t.Fatalf("split reads differ: %v", err)
		}
	}
	// An upload past its limit is 413, not a row error.
	_, err := ReadRowsCSV(LimitUpload(strings.NewReader(header+strings.Repeat(good, 100)), 200), "DJF", "", false)
	if e := errs.As(err); e == nil || e.Kind != errs.KindTooLarge {
		t.Fatalf("over the limit: %v", err)
	}
}
