package tlv

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want List
	}{
		{"one-byte tag", "5A 02 4242", List{Primitive(0x5A, []byte{0x42, 0x42})}},
		{"two-byte tag", "9F26 02 0102", List{Primitive(0x9F26, []byte{1, 2})}},
		{"three-byte tag", "DF8101 01 07", List{Primitive(0xDF8101, []byte{7})}},
		{"four-byte tag", "DF818201 01 07", List{Primitive(0xDF818201, []byte{7})}},
		{"empty value", "9F26 00", List{Primitive(0x9F26, []byte{})}},
		{"long form 81", "5F50 81 03 414243", List{Primitive(0x5F50, []byte("ABC"))}},
		{"long form 82", "5F50 82 0003 414243", List{Primitive(0x5F50, []byte("ABC"))}},
		{"long form 84", "5F50 84 00000003 414243", List{Primitive(0x5F50, []byte("ABC"))}},
		{"padding before between after", "00 FF 5A 01 01 00 00 FF 9C 01 00 00 00 00",
			List{Primitive(0x5A, []byte{1}), Primitive(0x9C, []byte{0})}},
		{"only padding", "00 00 00 00 00 00 00 00", nil},
		{"empty input", "", nil},
		{"constructed", "70 06 5A 01 01 9C 01 00",
			List{Constructed(0x70, Primitive(0x5A, []byte{1}), Primitive(0x9C, []byte{0}))}},
		{"constructed multi-byte tag", "BF0C 04 9F4D 01 0B", List{Constructed(0xBF0C, Primitive(0x9F4D, []byte{0x0B}))}},
		{"empty constructed", "77 00 9C 01 00", List{Constructed(0x77), Primitive(0x9C, []byte{0})}},
		{"padding inside constructed", "70 05 00 5A 01 01 FF", List{Constructed(0x70, Primitive(0x5A, []byte{1}))}},
		{"nested", "6F 08 A5 06 BF0C 03 87 01 01",
			List{Constructed(0x6F, Constructed(0xA5, Constructed(0xBF0C, Primitive(0x87, []byte{1}))))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(unhex(t, tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !equalLists(got, tt.want) {
				t.Errorf("Parse(%s) = %s, want %s", tt.in, dump(got), dump(tt.want))
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		kind   error
		offset int
		tag    Tag
	}{
		{"value truncated", unhex(t, "9F26 08 0102"), ErrTruncated, 0, 0x9F26},
		{"value truncated after padding", unhex(t, "00 00 5A 01 01 9F26 08 0102"), ErrTruncated, 5, 0x9F26},
		{"tag truncated", unhex(t, "5A 01 01 9F"), ErrTruncated, 3, 0},
		{"tag continuation truncated", unhex(t, "DF 81"), ErrTruncated, 0, 0},
		{"length missing", unhex(t, "9F26"), ErrTruncated, 2, 0x9F26},
		{"long length truncated", unhex(t, "5A 82 00"), ErrTruncated, 1, 0x5A},
		{"tag too long", unhex(t, "DF 81 81 81 01 01 00"), ErrTagTooLong, 0, 0},
		{"indefinite length", unhex(t, "70 80 5A 01 01 00 00"), ErrInvalidLength, 1, 0x70},
		{"reserved length", unhex(t, "5A FF"), ErrInvalidLength, 1, 0x5A},
		{"five length bytes", unhex(t, "5A 85 0000000001 01"), ErrInvalidLength, 1, 0x5A},
		{"huge length", unhex(t, "5A 84 FFFFFFFF 01"), ErrTruncated, 1, 0x5A},
		{"child overruns parent", unhex(t, "70 03 5A 05 01 02 03 04 05"), ErrTruncated, 2, 0x5A},
		{"too large", make([]byte, MaxSize+1), ErrTooLarge, MaxSize, 0},
		{"too deep", nested(MaxDepth), ErrTooDeep, 2 * MaxDepth, 0x5A},
		{"too many objects", bytes.Repeat(unhex(t, "9C 01 00"), MaxObjects+1), ErrTooManyObjects, 3 * MaxObjects, 0x9C},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse error = %v, want a *SyntaxError", err)
			}
			if !errors.Is(err, tt.kind) || se.Offset != tt.offset || se.Tag != tt.tag {
				t.Errorf("Parse error = %q (offset %d, tag %s), want %v at offset %d, tag %s",
					err, se.Offset, se.Tag, tt.kind, tt.offset, tt.tag)
			}
			if !strings.Contains(err.Error(), "offset ") {
				t.Errorf("error %q does not name the offset", err)
			}
		})
	}
}

// nested returns n levels of constructed 70 templates around a primitive 5A,
// so the primitive sits at depth n+1.
func nested(n int) []byte {
	b := []byte{0x5A, 0x01, 0x01}
	for i := 0; i < n; i++ {
		b = append([]byte{0x70, byte(len(b))}, b...)
	}
	return b
}

func TestParseLimitsAccepted(t *testing.T) {
	if _, err := Parse(nested(MaxDepth - 1)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	if _, err := Parse(bytes.Repeat(unhex(t, "9C 01 00"), MaxObjects)); err != nil {
		t.Errorf("%d objects: %v", MaxObjects, err)
	}
	big := append(unhex(t, "5F50 82 0FFB"), make([]byte, MaxSize-5)...)
	if _, err := Parse(big); err != nil {
		t.Errorf("%d bytes: %v", MaxSize, err)
	}
}

func TestFind(t *testing.T) {
	l, err := Parse(unhex(t, "6F 0C A5 07 BF0C 04 9F4D 01 0B 9C 01 00 9F4D 01 0C 5A 01 01"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tag   Tag
		found bool
		value []byte
	}{
		{0x9F4D, true, []byte{0x0B}}, // the nested one comes first, depth-first
		{0x9C, true, []byte{0x00}},
		{0x5A, true, []byte{0x01}},
		{0xBF0C, true, unhex(t, "9F4D 01 0B")},
		{0x9F26, false, nil},
	}
	for _, tt := range tests {
		o, ok := l.Find(tt.tag)
		if ok != tt.found || !bytes.Equal(o.Value, tt.value) {
			t.Errorf("Find(%s) = %X, %v; want %X, %v", tt.tag, o.Value, ok, tt.value, tt.found)
		}
	}
	if n := l.Count(); n != 7 {
		t.Errorf("Count() = %d, want 7", n)
	}
}

func TestTag(t *testing.T) {
	tests := []struct {
		tag         Tag
		str         string
		valid       bool
		constructed bool
	}{
		{0x5A, "5A", true, false},
		{0x70, "70", true, true},
		{0x9F26, "9F26", true, false},
		{0xBF0C, "BF0C", true, true},
		{0xDF8101, "DF8101", true, false},
		{0x1F, "1F", false, false},     // announces more bytes
		{0x9F, "9F", false, false},     // announces more bytes
		{0x5A01, "5A01", false, false}, // single-byte tag followed by a stray byte
		{0x9F8101, "9F8101", true, false},
		{0x9F81, "9F81", false, false}, // last byte still has bit 8 set
		{0x00, "00", false, false},
		{0xFF, "FF", false, true},
	}
	for _, tt := range tests {
		if tt.tag.String() != tt.str || tt.tag.Valid() != tt.valid || tt.tag.Constructed() != tt.constructed {
			t.Errorf("Tag %#x: String %s Valid %v Constructed %v; want %s %v %v", uint32(tt.tag),
				tt.tag, tt.tag.Valid(), tt.tag.Constructed(), tt.str, tt.valid, tt.constructed)
		}
	}
}

// equalLists compares tags, primitive values and children, ignoring the raw
// Value Parse keeps on constructed objects.
func equalLists(a, b List) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Tag != b[i].Tag {
			return false
		}
		if a[i].Tag.Constructed() {
			if !equalLists(a[i].Children, b[i].Children) {
				return false
			}
		} else if !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}
