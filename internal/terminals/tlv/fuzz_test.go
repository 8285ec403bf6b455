package tlv

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is a
// *SyntaxError with an offset inside the input, and that whatever parses
// re-encodes canonically: parse(encode(parse(x))) equals parse(x), and encoding
// that again gives the same bytes. Seeds are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Offset < 0 || (se.Offset >= len(data) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrTruncated)) {
				t.Fatalf("error offset %d outside %d bytes: %v", se.Offset, len(data), err)
			}
			return
		}
		if n := l.Count(); n > MaxObjects {
			t.Fatalf("parsed %d objects, limit %d", n, MaxObjects)
		}
		enc, err := Encode(l)
		if err != nil {
			t.Fatalf("Encode of a parsed list: %v", err)
		}
		if len(enc) > len(data) {
			t.Fatalf("canonical encoding %d bytes is longer than the input %d", len(enc), len(data))
		}
		again, err := Parse(enc)
		if err != nil {
			t.Fatalf("Parse of the canonical encoding: %v", err)
		}
		if !equalLists(l, again) {
			t.Fatalf("canonical encoding parses differently:\n%s\nvs\n%s", dump(l), dump(again))
		}
		enc2, err := Encode(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("canonical encoding is not stable: %X vs %X (%v)", enc, enc2, err)
		}
	})
}
