package tlv

import (
	"fmt"
	"strings"
)

// Tag is a BER-TLV tag: its one to four bytes read as a big-endian number, so
// the EMV application cryptogram tag 9F26 is Tag(0x9F26).
type Tag uint32

// maxTagBytes is the longest tag Parse accepts; EMV uses at most three bytes.
const maxTagBytes = 4

// String returns the tag in uppercase hex, two digits per byte ("9F26").
func (t Tag) String() string {
	return strings.ToUpper(fmt.Sprintf("%0*X", 2*t.size(), uint32(t)))
}

// Constructed reports whether the tag's first byte marks a constructed object (bit 6).
func (t Tag) Constructed() bool {
	return t.Bytes()[0]&0x20 != 0
}

// Bytes returns the tag's encoding.
func (t Tag) Bytes() []byte {
	n := t.size()
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(t)
		t >>= 8
	}
	return b
}

// Valid reports whether the tag is a well-formed BER tag: a first byte other
// than the padding bytes 00 and FF, and subsequent bytes present exactly when
// the first byte's low five bits are all set, each but the last with bit 8 set.
func (t Tag) Valid() bool {
	if t == 0 {
		return false
	}
	b := t.Bytes()
	if b[0] == 0x00 || b[0] == 0xff {
		return false
	}
	if b[0]&0x1f != 0x1f {
		return len(b) == 1
	}
	if len(b) == 1 {
		return false
	}
	for i, c := range b[1:] {
		last := i == len(b)-2
		if (c&0x80 == 0) != last {
			return false
		}
	}
	return true
}

// size is the number of bytes in the tag's encoding.
func (t Tag) size() int {
	switch {
	case t > 0xffffff:
		return 4
	case t > 0xffff:
		return 3
	case t > 0xff:
		return 2
	default:
		return 1
	}
}
